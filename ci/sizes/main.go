// Command sizes says what each dependency brings to the release binary:
// it reads an unstripped build's symbol table and prints, per module (and
// per group of standard-library packages), its machine code, its data and
// its estimated share of the function tables (.gopclntab and the funcdata
// in .rodata), beside the stripped binary's section sizes.
//
// usage: go run ./ci/sizes [-pkgs part] [-top n] BINARY
//
// BINARY is built as ci/cross.sh builds, without -s -w, so that it keeps
// its symbols (the sections the stripped file keeps are the same), e.g.:
//
//	CGO_ENABLED=0 GOOS=linux GOARCH=arm64 go build -trimpath -o /tmp/a ./cmd/agnx-lite
//	go run ./ci/sizes /tmp/a
//
// The function tables are shared out by each part's share of the code,
// so that column is an estimate; type descriptors and strings (the rest
// of .rodata) have no symbol of their own and are left out of the parts.
package main

import (
	"cmp"
	"debug/buildinfo"
	"debug/elf"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

func main() {
	pkgs := flag.String("pkgs", "", "list the packages of this part (e.g. std:net, github.com/tetratelabs/wazero)")
	top := flag.Int("top", 30, "rows to print")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: go run ./ci/sizes [-pkgs part] [-top n] BINARY (an unstripped build)")
		os.Exit(2)
	}
	if err := run(os.Stdout, flag.Arg(0), *pkgs, *top); err != nil {
		fmt.Fprintln(os.Stderr, "sizes:", err)
		os.Exit(1)
	}
}

func run(w io.Writer, bin, only string, top int) error {
	f, err := elf.Open(bin)
	if err != nil {
		return fmt.Errorf("open %s: %w", bin, err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		return fmt.Errorf("%s has no symbol table: build it without -ldflags '-s -w' (%w)", bin, err)
	}
	var mods []string
	if bi, err := buildinfo.ReadFile(bin); err == nil {
		mods = append(mods, bi.Main.Path)
		for _, d := range bi.Deps {
			mods = append(mods, d.Path)
		}
	}
	secs := map[string]uint64{}
	fmt.Fprintf(w, "sections:")
	for _, s := range f.Sections {
		switch s.Name {
		case ".text", ".rodata", ".gopclntab", ".typelink", ".itablink", ".noptrdata", ".data":
			secs[s.Name] = s.Size
			fmt.Fprintf(w, " %s %s", s.Name, kib(s.Size))
		}
	}
	fmt.Fprintln(w)

	parts := map[string]*part{}
	var text, funcdata, rodata uint64
	for _, s := range syms {
		sec := section(f, s)
		if sec == "" || s.Size == 0 {
			continue
		}
		if s.Name == "go:func.*" {
			funcdata += s.Size
			continue
		}
		name := partOf(s.Name, mods)
		if sec == ".text" {
			text += s.Size // the tables' share is of all the code, whatever is listed
		}
		if only != "" {
			if name != only {
				continue
			}
			name = pkgOf(s.Name)
		}
		p := parts[name]
		if p == nil {
			p = &part{name: name}
			parts[name] = p
		}
		if sec == ".text" {
			p.text += s.Size
		} else {
			p.data += s.Size
		}
		if sec == ".rodata" {
			rodata += s.Size
		}
	}
	tables := secs[".gopclntab"] + funcdata
	rows := make([]*part, 0, len(parts))
	for _, p := range parts {
		if text > 0 {
			p.tables = uint64(float64(tables) * float64(p.text) / float64(text))
		}
		rows = append(rows, p)
	}
	slices.SortFunc(rows, func(a, b *part) int { return cmp.Compare(b.total(), a.total()) })
	fmt.Fprintf(w, "%-44s %10s %10s %10s %10s\n", "part", "code", "data", "tables~", "total~")
	var sum part
	for i, p := range rows {
		if i < top {
			fmt.Fprintf(w, "%-44s %10s %10s %10s %10s\n", p.name, kib(p.text), kib(p.data), kib(p.tables), kib(p.total()))
		}
		sum.text, sum.data, sum.tables = sum.text+p.text, sum.data+p.data, sum.tables+p.tables
	}
	fmt.Fprintf(w, "%-44s %10s %10s %10s %10s\n", "all parts", kib(sum.text), kib(sum.data), kib(sum.tables), kib(sum.total()))
	fmt.Fprintf(w, "not in any part: type descriptors and strings in .rodata, %s\n", kib(secs[".rodata"]-min(secs[".rodata"], funcdata+rodata)))
	return nil
}

type part struct {
	name               string
	text, data, tables uint64
}

func (p *part) total() uint64 { return p.text + p.data + p.tables }

// section is the name of the loaded section a symbol lives in, or "" for
// one that takes no room in the file (.bss, .noptrbss, undefined).
func section(f *elf.File, s elf.Symbol) string {
	if int(s.Section) <= 0 || int(s.Section) >= len(f.Sections) {
		return ""
	}
	sec := f.Sections[s.Section]
	if sec.Type == elf.SHT_NOBITS {
		return ""
	}
	return sec.Name
}

// partOf is the module a symbol belongs to (the longest module path it
// starts with), or "std:<group>" for the standard library.
func partOf(sym string, mods []string) string {
	sym = strip(sym)
	best := ""
	for _, m := range mods {
		if len(m) > len(best) && strings.HasPrefix(sym, m) && len(sym) > len(m) && (sym[len(m)] == '.' || sym[len(m)] == '/') {
			best = m
		}
	}
	if best != "" {
		return best
	}
	if pkgOf(sym) == "main" && len(mods) > 0 {
		return mods[0] // the main package is the main module's
	}
	return "std:" + stdGroup(pkgOf(sym))
}

// strip drops the linker's prefixes: a type's descriptor or equality
// function, an itab, a method-value wrapper's pointer marks.
func strip(sym string) string {
	for _, p := range []string{"go:itab.", "type:.eq.", "type:.hash.", "type:", "go:string."} {
		if r, ok := strings.CutPrefix(sym, p); ok {
			sym = r
			break
		}
	}
	return strings.TrimLeft(sym, "*[]()0123456789")
}

// pkgOf is a symbol's package path: up to the first dot after the last
// slash, not counting type arguments in brackets or an itab's interface.
func pkgOf(sym string) string {
	sym = strip(sym)
	if i := strings.IndexAny(sym, "[(,"); i >= 0 {
		sym = sym[:i]
	}
	slash := strings.LastIndexByte(sym, '/')
	if dot := strings.IndexByte(sym[slash+1:], '.'); dot >= 0 {
		return sym[:slash+1+dot]
	}
	return sym
}

// stdGroup puts a standard-library package into one of a few groups, so
// that the table shows what the runtime, the network and TLS stack and
// the rest cost; vendored x/ packages go with the std package using them.
func stdGroup(pkg string) string {
	switch {
	case pkg == "go:func" || pkg == "go:buildinfo":
		return "linker"
	case hasAnyPrefix(pkg, "runtime", "internal/runtime", "internal/abi", "reflect", "internal/reflectlite", "sync", "internal/sync"):
		return "runtime+reflect"
	case hasAnyPrefix(pkg, "crypto", "vendor/golang.org/x/crypto", "math/big", "encoding/asn1", "encoding/pem"):
		return "crypto+tls+x509"
	case hasAnyPrefix(pkg, "net", "vendor/golang.org/x/net", "vendor/golang.org/x/text", "mime"):
		return "net+http"
	}
	return pkg
}

func hasAnyPrefix(s string, prefixes ...string) bool {
	for _, p := range prefixes {
		if s == p || strings.HasPrefix(s, p+"/") {
			return true
		}
	}
	return false
}

func kib(n uint64) string { return fmt.Sprintf("%.1f KiB", float64(n)/1024) }
