/*
 * A small program shaped like an ESP32 app, for the backtrace decoder's
 * tests: functions in IRAM (0x4008xxxx) and in flash (0x400dxxxx), static
 * inline helpers that the compiler inlines (so one PC has several frames,
 * as addr2line -i prints them), and calls between them. It never runs;
 * only its DWARF line table and symbols are read.
 */
#define IRAM __attribute__((noinline, section(".iram1.text")))
#define FLASH __attribute__((noinline))

volatile unsigned sink;
volatile unsigned slots[64];

static inline __attribute__((always_inline)) unsigned align_up4(unsigned n)
{
	return (n + 3u) & ~3u;
}

static inline __attribute__((always_inline)) unsigned pad_request(unsigned n)
{
	if (n < 16u) {
		n = 16u;
	}
	return align_up4(n + sink);
}

IRAM unsigned tp_pool_alloc(unsigned n)
{
	unsigned size = pad_request(n);
	slots[size & 63u] = size;
	return size;
}

IRAM void tp_pool_free(unsigned i)
{
	slots[i & 63u] = 0;
	sink += i;
}

static inline __attribute__((always_inline)) int probe_expired(unsigned sent, unsigned now)
{
	return now - sent > 5000u;
}

FLASH int tp_probe_reap(unsigned now)
{
	int reaped = 0;
	for (unsigned i = 0; i < 64u; i++) {
		if (slots[i] != 0 && probe_expired(slots[i], now)) {
			tp_pool_free(i);
			reaped++;
		}
	}
	return reaped;
}

FLASH int tp_derp_nearest(const unsigned *ms, int n)
{
	int best = 0;
	for (int i = 1; i < n; i++) {
		if (ms[i] < ms[best]) {
			best = i;
		}
	}
	sink = (unsigned)best;
	return best + 1;
}

FLASH unsigned tp_h2_window(unsigned received, unsigned returned)
{
	unsigned open = 65535u - (received - returned);
	if (open < 16384u) {
		sink += received - returned;
		return 65535u;
	}
	return open;
}

FLASH void tp_timer_init(void)
{
	for (unsigned i = 0; i < 64u; i++) {
		slots[i] = i * 7u;
	}
	sink = tp_pool_alloc(sink);
}

FLASH void tp_wifi_event(int id)
{
	switch (id) {
	case 0:
		sink = tp_h2_window(sink, 1);
		break;
	case 1:
		sink = (unsigned)tp_probe_reap(sink);
		break;
	default:
		tp_pool_free((unsigned)id);
	}
}

FLASH void app_main(void)
{
	static const unsigned ms[4] = {182, 24, 96, 31};
	tp_timer_init();
	sink += (unsigned)tp_derp_nearest(ms, 4);
	tp_wifi_event((int)sink);
}

void _start(void)
{
	app_main();
	for (;;) {
	}
}
