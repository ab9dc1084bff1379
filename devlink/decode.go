package devlink

import "github.com/tailpath/tailpath/devlink/crash"

// This file is devlink's side of package crash: the adapters that take a
// Line or a Crash. The parsers and the DWARF decoding live in crash, which
// works on bytes, program counters and registers and never imports devlink.

// findCrash looks for a crash report's first line anywhere in b
// (crash.Find). It returns the line's kind and the offset in b where the
// (possibly damaged) marker starts, or KindPlain and -1.
func findCrash(b []byte) (Kind, int) {
	m, i := crash.Find(b)
	switch m {
	case crash.MarkerPanic:
		return KindPanic, i
	case crash.MarkerAbort:
		return KindAbort, i
	case crash.MarkerStackOverflow:
		return KindStackOverflow, i
	case crash.MarkerBacktrace:
		return KindBacktrace, i
	case crash.MarkerCorruptHeap:
		return KindCorruptHeap, i
	}
	return KindPlain, -1
}

// PCs returns the program counters a line carries, in order: every PC of a
// Backtrace line, the PC of an abort line, the PC register of a register
// dump. Other hex numbers are never treated as code addresses.
func PCs(l *Line) []uint64 {
	body := l.Body()
	switch l.Kind {
	case KindBacktrace:
		bt, _ := crash.ParseBacktrace(body)
		out := make([]uint64, 0, len(bt.Frames))
		for _, f := range bt.Frames {
			if f.PC != 0 {
				out = append(out, uint64(f.PC))
			}
		}
		return out
	case KindAbort:
		if pc, _, err := crash.ParseAbortPC(body); err == nil {
			return []uint64{uint64(pc)}
		}
	case KindRegisters:
		var out []uint64
		if pc, ok := crash.ParseRegisterPC(body); ok {
			out = append(out, uint64(pc))
		}
		if ra, ok := crash.ParseRegisterRA(body); ok {
			out = append(out, uint64(ra))
		}
		return out
	}
	return nil
}

// DecodeLine returns addr2line-style text for every PC in l
// (`0x400d1234: app_main at main.c:12`, then ` (inlined by) …` lines), or
// nil. For a RISC-V `Stack memory:` row it decodes the words that are
// return addresses in this ELF (Symbolizer.DecodeStackRow): the backtrace
// recovered from the stack, row by row.
func DecodeLine(s *crash.Symbolizer, l *Line) []string {
	if l.Kind == KindStackDump {
		return s.DecodeStackRow(l.Body())
	}
	var out []string
	for _, pc := range PCs(l) {
		out = s.AppendDecoded(out, pc)
	}
	return out
}

// NullAccess reports a crash that read or wrote near address 0, a NULL
// pointer dereferenced (crash.NullAccess on the crash's architecture,
// reason and register dump). reg names the register ("EXCVADDR",
// "MTVAL"), access is "read" or "write".
func (c *Crash) NullAccess() (reg string, addr uint32, access string, ok bool) {
	return crash.NullAccess(c.Arch, c.Reason.String(), c.Registers)
}

// DecodedInLog reports whether the crash report's lines already hold
// decoded frames (a monitor with the ELF decoded them on the board's
// side, crash.IsDecodedFrame): then tailpath's own --elf adds nothing the
// log lacks.
func (c *Crash) DecodedInLog() bool {
	for _, l := range c.Lines {
		if crash.IsDecodedFrame(l.String()) {
			return true
		}
	}
	return false
}
