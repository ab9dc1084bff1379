// Package crash decodes ESP32 crash reports: it finds a report's first
// line in a serial log (Find), parses its lines (ParseReset, ParsePanic,
// ParseRegisters, ParseBacktrace, ParseStackRow, …) and turns program
// counters into `function at file:line` from an ELF's DWARF (Symbolizer).
// It works on bytes, program counters and registers; devlink, the serial
// transport, classifies lines with it and keeps the adapters that take a
// devlink.Line or devlink.Crash.
package crash

import (
	"crypto/sha256"
	"debug/dwarf"
	"debug/elf"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// Symbolizer turns program counters into `function at file:line` using an
// ELF's DWARF debug info (debug/elf and debug/dwarf only: no toolchain),
// including the frames of inlined functions, like `addr2line -pfiaC`. Build
// it with OpenELF; it is safe for concurrent use after that.
type Symbolizer struct {
	mu     sync.Mutex  // debug/dwarf caches are not documented as concurrency-safe
	d      *dwarf.Data // nil when the ELF has no DWARF
	cus    []cuSpan    // sorted by lo
	syms   []elfSym    // function symbols sorted by addr, the fallback
	sha256 string      // lowercase hex of the whole ELF file
	// code holds the executable sections' bytes (IsReturnAddress reads
	// the instruction before an address); machine is the ELF's e_machine.
	code    []codeSection
	machine elf.Machine
}

type codeSection struct {
	addr uint64
	data []byte
}

type cuSpan struct {
	lo, hi uint64
	off    dwarf.Offset
}

type elfSym struct {
	addr, size uint64
	name       string
}

// Location is one frame of a decoded PC. A PC inside inlined code yields
// several: the innermost first, then each caller it was inlined into.
type Location struct {
	PC       uint64
	Function string // "" when unknown (addr2line prints "??")
	File     string // "" when unknown
	Line     int    // 0 when unknown
	// Inlined is true for the frames after the first (addr2line's "(inlined by)").
	Inlined bool
}

// String formats like addr2line -pfiaC: `func at file:line`.
func (l Location) String() string {
	fn, file, line := l.Function, l.File, "?"
	if fn == "" {
		fn = "??"
	}
	if file == "" {
		file = "??"
	}
	if l.Line > 0 {
		line = strconv.Itoa(l.Line)
	}
	return fn + " at " + file + ":" + line
}

// OpenELFFile opens path for reading as an ELF file; a directory is
// refused here, in words, rather than by the read that follows ("read
// adir: is a directory"). devlink's binary logs read their ELF through it.
func OpenELFFile(path string) (*os.File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open ELF: %w", err)
	}
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		f.Close()
		return nil, fmt.Errorf("%s is a directory, not an ELF file", path)
	}
	return f, nil
}

// NotELF words debug/elf's refusal of path: not its "bad magic number
// '[114 111 111 116]' in record at byte 0x0" (the file's first bytes as
// numbers) or a bare EOF.
func NotELF(path string, err error) error {
	var fe *elf.FormatError
	switch {
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("%s is not an ELF file: it is too short to be one", path)
	case errors.As(err, &fe) && strings.Contains(err.Error(), "bad magic number"):
		return fmt.Errorf("%s is not an ELF file: it does not start with ELF's magic bytes (0x7f 'E' 'L' 'F')", path)
	}
	return fmt.Errorf("%s is not a usable ELF file: %w", path, err)
}

// OpenELF reads path and prepares lookups. Errors: the file cannot be read,
// or it is not an ELF. An ELF without DWARF still decodes function names
// from its symbol table.
func OpenELF(path string) (*Symbolizer, error) {
	f, err := OpenELFFile(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return nil, fmt.Errorf("read ELF %s: %w", path, err)
	}
	ef, err := elf.NewFile(f)
	if err != nil {
		return nil, NotELF(path, err)
	}
	s := &Symbolizer{sha256: hex.EncodeToString(h.Sum(nil)), machine: ef.Machine}
	for _, sec := range ef.Sections {
		if sec.Flags&elf.SHF_EXECINSTR == 0 || sec.Type != elf.SHT_PROGBITS || sec.Addr == 0 {
			continue
		}
		if data, err := sec.Data(); err == nil {
			s.code = append(s.code, codeSection{addr: sec.Addr, data: data})
		}
	}
	if syms, err := ef.Symbols(); err == nil {
		for _, sy := range syms {
			if elf.ST_TYPE(sy.Info) == elf.STT_FUNC && sy.Value != 0 {
				s.syms = append(s.syms, elfSym{addr: sy.Value, size: sy.Size, name: sy.Name})
			}
		}
		sort.Slice(s.syms, func(i, j int) bool { return s.syms[i].addr < s.syms[j].addr })
	}
	d, err := ef.DWARF()
	if err != nil {
		return s, nil // no debug info: symbol table only
	}
	s.d = d
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil || e == nil {
			break
		}
		if e.Tag == dwarf.TagCompileUnit || e.Tag == dwarf.TagPartialUnit {
			if rs, err := d.Ranges(e); err == nil {
				for _, rg := range rs {
					if rg[1] > rg[0] {
						s.cus = append(s.cus, cuSpan{lo: rg[0], hi: rg[1], off: e.Offset})
					}
				}
			}
		}
		r.SkipChildren()
	}
	sort.Slice(s.cus, func(i, j int) bool { return s.cus[i].lo < s.cus[j].lo })
	return s, nil
}

// SHA256 returns the lowercase hex SHA-256 of the ELF file.
func (s *Symbolizer) SHA256() string { return s.sha256 }

// MatchesBoard reports whether the board's printed `ELF file SHA256:` prefix
// matches this ELF. An empty prefix (not seen yet) matches.
func (s *Symbolizer) MatchesBoard(prefix string) bool {
	return prefix == "" || strings.HasPrefix(s.sha256, strings.ToLower(prefix))
}

// Lookup decodes one PC into its frames, innermost first. It always returns
// at least one Location (with empty fields when nothing is known).
func (s *Symbolizer) Lookup(pc uint64) []Location {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.d != nil {
		if locs := s.lookupDWARF(pc); len(locs) > 0 {
			return locs
		}
	}
	return []Location{{PC: pc, Function: s.symbolName(pc)}}
}

func (s *Symbolizer) symbolName(pc uint64) string {
	i := sort.Search(len(s.syms), func(i int) bool { return s.syms[i].addr > pc }) - 1
	if i < 0 {
		return ""
	}
	sy := s.syms[i]
	if pc < sy.addr+max(sy.size, 1) {
		return sy.name
	}
	return ""
}

var errFound = errors.New("found")

func (s *Symbolizer) lookupDWARF(pc uint64) []Location {
	var cu dwarf.Offset
	found := false
	for _, c := range s.cus {
		if c.lo > pc {
			break
		}
		if pc < c.hi {
			cu, found = c.off, true
		}
	}
	if !found {
		return nil
	}
	r := s.d.Reader()
	r.Seek(cu)
	cuEntry, err := r.Next()
	if err != nil || cuEntry == nil {
		return nil
	}
	var chain []*dwarf.Entry
	if cuEntry.Children {
		_ = s.walk(r, pc, &chain)
	}
	// The line table row for pc gives the innermost file:line.
	file, line := "", 0
	var files []*dwarf.LineFile
	if lr, err := s.d.LineReader(cuEntry); err == nil && lr != nil {
		files = lr.Files()
		file, line = rowFor(lr, pc)
	}
	if len(chain) == 0 {
		if file == "" {
			return nil
		}
		return []Location{{PC: pc, Function: s.symbolName(pc), File: file, Line: line}}
	}
	locs := make([]Location, 0, len(chain))
	for i := len(chain) - 1; i >= 0; i-- {
		locs = append(locs, Location{PC: pc, Function: s.name(chain[i], 0), File: file, Line: line, Inlined: i != len(chain)-1})
		// The caller's position is where this inlined copy was called from.
		e := chain[i]
		file, line = "", 0
		if v, ok := e.Val(dwarf.AttrCallFile).(int64); ok && v >= 0 && int(v) < len(files) && files[v] != nil {
			file = files[v].Name
		}
		if v, ok := e.Val(dwarf.AttrCallLine).(int64); ok {
			line = int(v)
		}
	}
	return locs
}

// walk reads the children of the current DIE, appending to chain every
// subprogram and inlined subroutine whose ranges hold pc, outermost first.
func (s *Symbolizer) walk(r *dwarf.Reader, pc uint64, chain *[]*dwarf.Entry) error {
	for {
		e, err := r.Next()
		if err != nil {
			return err
		}
		if e == nil || e.Tag == 0 {
			return nil
		}
		switch e.Tag {
		case dwarf.TagSubprogram, dwarf.TagInlinedSubroutine, dwarf.TagLexDwarfBlock,
			dwarf.TagNamespace, dwarf.TagClassType, dwarf.TagStructType:
		default:
			if e.Children {
				r.SkipChildren()
			}
			continue
		}
		rs, _ := s.d.Ranges(e)
		if len(rs) == 0 {
			// Namespaces, classes and blocks without code ranges: look inside.
			if e.Children && e.Tag != dwarf.TagSubprogram && e.Tag != dwarf.TagInlinedSubroutine {
				if err := s.walk(r, pc, chain); err != nil {
					return err
				}
			} else if e.Children {
				r.SkipChildren()
			}
			continue
		}
		in := false
		for _, rg := range rs {
			if rg[0] <= pc && pc < rg[1] {
				in = true
				break
			}
		}
		if !in {
			if e.Children {
				r.SkipChildren()
			}
			continue
		}
		if e.Tag == dwarf.TagSubprogram || e.Tag == dwarf.TagInlinedSubroutine {
			*chain = append(*chain, e)
		}
		if e.Children {
			if err := s.walk(r, pc, chain); err != nil {
				return err
			}
		}
		return errFound
	}
}

// name resolves a DIE's function name through abstract origins and
// specifications (depth-limited against loops).
func (s *Symbolizer) name(e *dwarf.Entry, depth int) string {
	if depth > 8 || e == nil {
		return ""
	}
	if n, ok := e.Val(dwarf.AttrName).(string); ok {
		return n
	}
	for _, a := range []dwarf.Attr{dwarf.AttrAbstractOrigin, dwarf.AttrSpecification} {
		if off, ok := e.Val(a).(dwarf.Offset); ok {
			r := s.d.Reader()
			r.Seek(off)
			if o, err := r.Next(); err == nil && o != nil {
				if n := s.name(o, depth+1); n != "" {
					return n
				}
			}
		}
	}
	if n, ok := e.Val(dwarf.AttrLinkageName).(string); ok {
		return n
	}
	return ""
}

// rowFor scans a CU's line table for the row covering pc: the last row of a
// sequence whose address is ≤ pc, provided the sequence continues past pc.
// (LineReader.SeekPC misses rows in tables with several sequences.)
func rowFor(lr *dwarf.LineReader, pc uint64) (file string, line int) {
	var le dwarf.LineEntry
	var prev dwarf.LineEntry
	havePrev := false
	bestAddr := uint64(0)
	for lr.Next(&le) == nil {
		if havePrev && prev.Address <= pc && pc < le.Address && prev.Address >= bestAddr {
			bestAddr = prev.Address
			if prev.File != nil {
				file = prev.File.Name
			}
			line = prev.Line
		}
		if le.EndSequence {
			havePrev = false
			continue
		}
		prev, havePrev = le, true
	}
	return file, line
}

// DecodeStackRow returns addr2line-style text for the words of a RISC-V
// `Stack memory:` row (ParseStackRow) that are return addresses in this
// ELF (IsReturnAddress): the backtrace recovered from the stack, row by
// row. nil when b is not a row or no word is a return address.
func (s *Symbolizer) DecodeStackRow(b []byte) []string {
	_, words, ok := ParseStackRow(b, nil)
	if !ok {
		return nil
	}
	var out []string
	for _, w := range words {
		if s.IsReturnAddress(uint64(w)) {
			out = s.AppendDecoded(out, uint64(w))
		}
	}
	return out
}

// IsReturnAddress reports whether addr can be a return address in this
// ELF: it lies in an executable section and, for RISC-V, the instruction
// just before it is a call that links the return address register (jal or
// jalr with rd ra or t0, or the compressed c.jal / c.jalr). For other
// machines it reports whether addr lies in code inside a function. Used to
// recover a backtrace from a RISC-V panic's stack dump.
func (s *Symbolizer) IsReturnAddress(addr uint64) bool {
	for _, c := range s.code {
		if addr < c.addr || addr >= c.addr+uint64(len(c.data)) {
			continue
		}
		off := addr - c.addr
		if s.machine != elf.EM_RISCV {
			return s.symbolName(addr) != ""
		}
		if off >= 4 {
			ins := uint32(c.data[off-4]) | uint32(c.data[off-3])<<8 | uint32(c.data[off-2])<<16 | uint32(c.data[off-1])<<24
			op, rd := ins&0x7f, (ins>>7)&0x1f
			if ins&3 == 3 && (op == 0x6f || op == 0x67) && (rd == 1 || rd == 5) {
				return true
			}
		}
		if off >= 2 {
			h := uint16(c.data[off-2]) | uint16(c.data[off-1])<<8
			if h&3 == 1 && h>>13 == 1 { // c.jal (RV32)
				return true
			}
			if h&3 == 2 && h>>12 == 9 && (h>>7)&0x1f != 0 && (h>>2)&0x1f == 0 { // c.jalr
				return true
			}
		}
		return false
	}
	return false
}

// AppendDecoded appends the addr2line-style text for pc to out
// (`0x400d1234: app_main at main.c:12`, then ` (inlined by) …` lines). A PC in the
// chip's mask ROM that the ELF does not cover reads "in ROM, not in the
// ELF" (decoding it needs the ROM's own ELF).
func (s *Symbolizer) AppendDecoded(out []string, pc uint64) []string {
	locs := s.Lookup(pc)
	if len(locs) == 1 && locs[0].Function == "" && locs[0].File == "" && pc <= 0xffffffff && InROM("", uint32(pc)) {
		return append(out, fmt.Sprintf("0x%08x: in ROM, not in the ELF", pc))
	}
	for _, loc := range locs {
		if loc.Inlined {
			out = append(out, " (inlined by) "+loc.String())
		} else {
			out = append(out, fmt.Sprintf("0x%08x: %s", pc, loc))
		}
	}
	return out
}
