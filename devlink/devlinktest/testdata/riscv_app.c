// A tiny program laid out like an ESP32-C3 app in flash (0x4200_0000), for
// the RISC-V panic decoder's test (devlink/riscv_test.go): leaf traps,
// middle called it (c.jal), app_main called middle through a pointer
// (c.jalr), _start called app_main.
volatile int sink;
__attribute__((noinline)) void leaf(int x)
{
	sink = x;
	if (x == 3) {
		__builtin_trap();
	}
}
__attribute__((noinline)) void middle(int x)
{
	leaf(x + 1);
	sink += 2;
}
void (*volatile hook)(int) = middle;
__attribute__((noinline)) void app_main(void)
{
	hook(2);
	sink += 3;
}
void _start(void)
{
	app_main();
	for (;;) {
	}
}
