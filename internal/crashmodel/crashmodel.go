// Package crashmodel enumerates the states a power cut may leave on disk
// during one traced file system operation, in the manner of ALICE and
// LazyFS. The traced calls (from package strace) are replayed on a small
// abstract file system: directories of named entries pointing at inodes
// that hold data. After every call a power cut is assumed, and every state
// that cut may leave is built.
//
// The persistence model, a pessimistic reading of POSIX that journaling
// file systems (ext4, xfs, btrfs) stay within:
//
//   - Durable: the state before the call (the base image is taken as
//     synced); file data written before a completed fsync of that file; a
//     directory entry change (create, rename, link, unlink, mkdir) made
//     before a completed fsync of its directory (both directories for a
//     cross-directory rename). Nothing else is: fsync of a file does not
//     make its name durable, and fsync of a directory does not make the
//     directory's own name in its parent durable.
//   - Pending (everything else executed before the cut): any subset may
//     have reached the disk, not only a prefix, so operations between two
//     syncs land in any order. A pending entry change is lost or applied
//     whole (a rename is atomic). A pending write is lost, applied, applied
//     as zeros (the size grew but the data blocks never landed), or half
//     applied (a prefix: torn). A pending truncate is lost or applied.
//     The persisted ones take effect in program order, so a later change to
//     the same name or byte wins.
//   - Not modelled: permissions and timestamps, the disk lying about a
//     flush, and a failed fsync.
//
// It is internal: only the jobstore module's tests use it. The calls it
// knows are Linux's, as strace names them.
package crashmodel

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/axqua/jobstore/internal/strace"
)

// Inode is a file or a directory of the abstract file system.
type Inode struct {
	Dir     bool
	Data    []byte         // a file's bytes
	Entries map[string]int // a directory's entries: name -> inode
}

// Image is an abstract file system: inodes by number; 0 is unused, Root is
// the root directory.
type Image []Inode

// Root is the inode number of an image's root directory.
const Root = 1

// Clone returns a deep copy of img.
func (img Image) Clone() Image {
	c := make(Image, len(img))
	for i, n := range img {
		c[i] = Inode{Dir: n.Dir, Data: slices.Clone(n.Data)}
		if n.Entries != nil {
			c[i].Entries = make(map[string]int, len(n.Entries))
			for k, v := range n.Entries {
				c[i].Entries[k] = v
			}
		}
	}
	return c
}

// NewInode adds an empty inode and returns its number.
func (img *Image) NewInode(dir bool) int {
	n := Inode{Dir: dir}
	if dir {
		n.Entries = map[string]int{}
	}
	*img = append(*img, n)
	return len(*img) - 1
}

// Lookup resolves rel, a slash-separated path under the root.
func (img Image) Lookup(rel string) (int, bool) {
	ino := Root
	if rel == "." {
		return ino, true
	}
	for _, name := range strings.Split(rel, "/") {
		n := img[ino]
		if !n.Dir {
			return 0, false
		}
		next, ok := n.Entries[name]
		if !ok {
			return 0, false
		}
		ino = next
	}
	return ino, true
}

func (img Image) writeAt(ino int, off int64, p []byte) {
	d := img[ino].Data
	if end := int(off) + len(p); end > len(d) {
		d = append(d, make([]byte, end-len(d))...)
	}
	copy(d[off:], p)
	img[ino].Data = d
}

// Render is a canonical text of what is reachable from the root.
func (img Image) Render() string {
	var b strings.Builder
	var walk func(ino int, path string)
	walk = func(ino int, path string) {
		n := img[ino]
		if !n.Dir {
			fmt.Fprintf(&b, "%s %q\n", path, n.Data)
			return
		}
		fmt.Fprintf(&b, "%s/\n", path)
		names := make([]string, 0, len(n.Entries))
		for name := range n.Entries {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			walk(n.Entries[name], path+"/"+name)
		}
	}
	walk(Root, ".")
	return b.String()
}

// Materialize writes what is reachable from the root into dst, which exists.
func (img Image) Materialize(dst string) error {
	var walk func(ino int, path string) error
	walk = func(ino int, path string) error {
		for name, child := range img[ino].Entries {
			p := filepath.Join(path, name)
			var err error
			if img[child].Dir {
				if err = os.Mkdir(p, 0o755); err == nil {
					err = walk(child, p)
				}
			} else {
				err = os.WriteFile(p, img[child].Data, 0o644)
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
	return walk(Root, dst)
}

// Snapshot reads the real tree under root into an image. Only directories
// and regular files are modelled: anything else is an error.
func Snapshot(root string) (Image, error) {
	img := Image{{}} // inode 0 is unused
	var walk func(path string) (int, error)
	walk = func(path string) (int, error) {
		fi, err := os.Lstat(path)
		if err != nil {
			return 0, err
		}
		switch {
		case fi.IsDir():
			ino := img.NewInode(true)
			des, err := os.ReadDir(path)
			if err != nil {
				return 0, err
			}
			for _, de := range des {
				child, err := walk(filepath.Join(path, de.Name()))
				if err != nil {
					return 0, err
				}
				img[ino].Entries[de.Name()] = child
			}
			return ino, nil
		case fi.Mode().IsRegular():
			ino := img.NewInode(false)
			img[ino].Data, err = os.ReadFile(path)
			return ino, err
		default:
			return 0, fmt.Errorf("the power-loss model knows files and directories, not %s (%v)", path, fi.Mode())
		}
	}
	if _, err := walk(root); err != nil {
		return nil, err
	}
	return img, nil
}

type opKind int

const (
	opEntries opKind = iota // directory entry changes: create, mkdir, rename, link, unlink
	opData                  // a write or a truncate of a file
	opSync                  // fsync or fdatasync of a file or a directory
)

// entryChange sets dir's entry name to inode ino, or removes it (ino 0).
type entryChange struct {
	dir  int
	name string
	ino  int
}

// Op is one traced call as the model sees it: an entry change, a data
// change or a sync.
type Op struct {
	kind    opKind
	ino     int           // opData, opSync
	changes []entryChange // opEntries, applied together
	off     int64         // opData: where the write starts, or the truncated length
	data    []byte        // opData: the bytes written
	trunc   bool          // opData: a truncate, not a write
	desc    string        // the traced call, short
}

// outcome is how much of a pending operation a power cut let through.
type outcome int

const (
	persisted   outcome = iota
	lost                // never reached the disk
	zeroFilled          // write: the file grew, the data blocks never landed
	halfWritten         // write: the first half of the bytes landed (torn)
)

func (o outcome) String() string {
	return [...]string{"persisted", "lost", "zero-filled", "half-written"}[o]
}

// outcomes are what a power cut may do to op while it is pending.
func (op Op) outcomes() []outcome {
	if op.kind == opData && !op.trunc && len(op.data) > 1 {
		return []outcome{lost, persisted, zeroFilled, halfWritten}
	}
	return []outcome{lost, persisted}
}

// owners are the inodes whose fsync makes op durable.
func (op Op) owners() []int {
	if op.kind == opEntries {
		var dirs []int
		for _, c := range op.changes {
			if !slices.Contains(dirs, c.dir) {
				dirs = append(dirs, c.dir)
			}
		}
		return dirs
	}
	return []int{op.ino}
}

// String is the traced call, short, with paths relative to the root.
func (op Op) String() string { return op.desc }

// describe names a traced call briefly, with paths relative to root.
func describe(e strace.Event, root string) string {
	rel := func(p string) string {
		if r, err := filepath.Rel(root, p); err == nil {
			return r
		}
		return p
	}
	s := e.Name + " " + rel(e.Path)
	if e.NewPath != "" {
		s += " -> " + rel(e.NewPath)
	}
	switch e.Name {
	case "openat", "renameat2":
		s += " " + e.Flags
	case "write", "pwrite64":
		s += fmt.Sprintf(" (%d bytes)", len(e.Data))
	}
	return s
}

func (img Image) apply(op Op, how outcome) {
	switch {
	case how == lost || op.kind == opSync:
	case op.kind == opEntries:
		for _, c := range op.changes {
			if c.ino == 0 {
				delete(img[c.dir].Entries, c.name)
			} else {
				img[c.dir].Entries[c.name] = c.ino
			}
		}
	case op.trunc:
		if d := img[op.ino].Data; int(op.off) < len(d) {
			img[op.ino].Data = d[:op.off]
		} else {
			img.writeAt(op.ino, op.off, nil)
		}
	case how == zeroFilled:
		img.writeAt(op.ino, op.off, make([]byte, len(op.data)))
	case how == halfWritten:
		img.writeAt(op.ino, op.off, op.data[:len(op.data)/2])
	default:
		img.writeAt(op.ino, op.off, op.data)
	}
}

// Model is one traced call on the abstract file system.
type Model struct {
	base Image // durable before the call; plus an unnamed inode for each the call creates
	ops  []Op
}

// Ops are the model operations of the call, in program order. A power cut
// may come after any prefix of them. The slice is the model's own: do not
// change it.
func (m *Model) Ops() []Op { return m.ops }

// maxStatesPerCrashPoint bounds the enumeration (a trace with many unsynced
// operations would explode it).
const maxStatesPerCrashPoint = 1 << 16

// Build translates evs, the calls of one traced operation on the
// tree under root, into model operations, replaying them on a copy of base
// (the tree before the call) to resolve names and descriptors to inodes.
// A call it has no rule for, or that acts on a file or descriptor it does
// not know, is an error: the model never guesses.
func Build(root string, base Image, evs []strace.Event) (*Model, error) {
	m := &Model{base: base.Clone()}
	vol := base.Clone() // the volatile state: every call applied
	type openFile struct {
		ino int
		off int64
	}
	fds := map[int]*openFile{}
	rel := func(p string) (string, bool) {
		r, err := filepath.Rel(root, p)
		return filepath.ToSlash(r), err == nil && r != ".." && !strings.HasPrefix(r, "../")
	}
	parentOf := func(p string) (dir int, name string, err error) {
		r, ok := rel(filepath.Dir(p))
		if !ok {
			return 0, "", fmt.Errorf("outside the modelled tree: %s", p)
		}
		dir, ok = vol.Lookup(r)
		if !ok || !vol[dir].Dir {
			return 0, "", fmt.Errorf("no directory %s in the model", filepath.Dir(p))
		}
		return dir, filepath.Base(p), nil
	}
	newInode := func(dir bool) int {
		ino := vol.NewInode(dir)
		if m.base.NewInode(dir) != ino {
			panic("model and volatile state disagree on inode numbers")
		}
		return ino
	}
	for _, e := range evs {
		if _, in := rel(e.Path); !in || !e.OK() {
			continue // a marker, or a failed call, which changed nothing
		}
		var ops []Op
		switch e.Name {
		case "openat":
			dir, name, err := parentOf(e.Path)
			if err != nil && e.Path != root {
				return nil, fmt.Errorf("%w: %s", err, e.Line)
			}
			ino := Root
			if e.Path != root {
				var ok bool
				if ino, ok = vol[dir].Entries[name]; !ok {
					if !strace.HasFlag(e.Flags, "O_CREAT") {
						return nil, fmt.Errorf("opened a file the model does not have: %s", e.Line)
					}
					ino = newInode(false)
					ops = append(ops, Op{kind: opEntries, changes: []entryChange{{dir, name, ino}}})
				} else if strace.HasFlag(e.Flags, "O_TRUNC") {
					ops = append(ops, Op{kind: opData, ino: ino, trunc: true})
				}
			}
			f := &openFile{ino: ino}
			if strace.HasFlag(e.Flags, "O_APPEND") {
				f.off = int64(len(vol[ino].Data))
			}
			fds[e.FD] = f
		case "write", "pwrite64", "ftruncate", "fsync", "fdatasync":
			f, ok := fds[e.FD]
			if !ok {
				return nil, fmt.Errorf("fd %d not opened in the trace: %s", e.FD, e.Line)
			}
			switch e.Name {
			case "write":
				ops = append(ops, Op{kind: opData, ino: f.ino, off: f.off, data: e.Data})
				f.off += int64(len(e.Data))
			case "pwrite64":
				ops = append(ops, Op{kind: opData, ino: f.ino, off: e.Offset, data: e.Data})
			case "ftruncate":
				ops = append(ops, Op{kind: opData, ino: f.ino, off: e.Offset, trunc: true})
			default:
				ops = append(ops, Op{kind: opSync, ino: f.ino})
			}
		case "close":
			delete(fds, e.FD)
		case "mkdir", "mkdirat":
			dir, name, err := parentOf(e.Path)
			if err != nil {
				return nil, fmt.Errorf("%w: %s", err, e.Line)
			}
			ops = append(ops, Op{kind: opEntries, changes: []entryChange{{dir, name, newInode(true)}}})
		case "renameat", "renameat2", "linkat":
			if strace.HasFlag(e.Flags, "RENAME_EXCHANGE") || strace.HasFlag(e.Flags, "RENAME_WHITEOUT") {
				return nil, fmt.Errorf("the model has no rule for %s", e.Line)
			}
			odir, oname, err := parentOf(e.Path)
			if err != nil {
				return nil, fmt.Errorf("%w: %s", err, e.Line)
			}
			ndir, nname, err := parentOf(e.NewPath)
			if err != nil {
				return nil, fmt.Errorf("%w: %s", err, e.Line)
			}
			ino, ok := vol[odir].Entries[oname]
			if !ok {
				return nil, fmt.Errorf("renamed a file the model does not have: %s", e.Line)
			}
			changes := []entryChange{{ndir, nname, ino}}
			if e.Name != "linkat" && e.Path != e.NewPath {
				changes = append(changes, entryChange{odir, oname, 0})
			}
			ops = append(ops, Op{kind: opEntries, changes: changes})
		case "unlinkat":
			dir, name, err := parentOf(e.Path)
			if err != nil {
				return nil, fmt.Errorf("%w: %s", err, e.Line)
			}
			ops = append(ops, Op{kind: opEntries, changes: []entryChange{{dir, name, 0}}})
		case "newfstatat", "fstat", "fchmod", "fchmodat":
			// metadata is not modelled
		default:
			return nil, fmt.Errorf("the model has no rule for %s", e.Line)
		}
		for _, op := range ops {
			op.desc = describe(e, root)
			vol.apply(op, persisted)
			m.ops = append(m.ops, op)
		}
	}
	return m, nil
}

// durable reports whether ops[i] is on disk whatever a cut after the first
// k operations does: each inode it belongs to was fsynced after it.
func (m *Model) durable(i, k int) bool {
	for _, owner := range m.ops[i].owners() {
		if !slices.ContainsFunc(m.ops[i+1:k], func(s Op) bool { return s.kind == opSync && s.ino == owner }) {
			return false
		}
	}
	return true
}

// States calls visit with every state a power cut after the first k
// operations may leave, and what the cut did to the pending operations.
// It returns how many states it enumerated.
func (m *Model) States(k int, visit func(img Image, what string)) (int, error) {
	var pending []int
	total := 1
	for i := range k {
		if m.ops[i].kind != opSync && !m.durable(i, k) {
			pending = append(pending, i)
			total *= len(m.ops[i].outcomes())
			if total > maxStatesPerCrashPoint {
				return 0, fmt.Errorf("more than %d states after %d operations", maxStatesPerCrashPoint, k)
			}
		}
	}
	choice := make([]int, len(pending)) // an odometer over the pending outcomes
	for n := 0; n < total; n++ {
		how := map[int]outcome{}
		var what []string
		for j, i := range pending {
			how[i] = m.ops[i].outcomes()[choice[j]]
			what = append(what, fmt.Sprintf("%s: %s", how[i], m.ops[i]))
		}
		img := m.base.Clone()
		for i := range k {
			o, isPending := how[i]
			if !isPending {
				o = persisted
			}
			img.apply(m.ops[i], o)
		}
		visit(img, strings.Join(what, "; "))
		for j := range choice {
			if choice[j]++; choice[j] < len(m.ops[pending[j]].outcomes()) {
				break
			}
			choice[j] = 0
		}
	}
	return total, nil
}

// Report counts what one Check covered.
type Report struct {
	Ops        int      // model operations; there are Ops+1 crash points
	Enumerated int      // states enumerated, duplicates included
	Checked    int      // distinct states written out and checked
	Violations []string // what check found, with the crash point and the pending operations
}

// Check enumerates the states of every crash point of m, writes each
// distinct one out under scratch (an existing, empty directory) and calls
// check on it; check returns what is wrong with the state, nothing if it is
// good. A state is acknowledged when the cut came after the last operation
// (the traced call had returned). Each state's directory is removed once
// checked. An error is the model's or the file system's, never a
// violation.
func (m *Model) Check(scratch string, check func(root string, acked bool) []string) (Report, error) {
	r := Report{Ops: len(m.ops)}
	seen := map[string]bool{}
	for k := 0; k <= len(m.ops); k++ {
		acked := k == len(m.ops)
		at := "before the first call"
		if k > 0 {
			at = "after " + m.ops[k-1].String()
		}
		var failed error
		n, err := m.States(k, func(img Image, what string) {
			key := fmt.Sprint(acked, "\n", img.Render())
			if failed != nil || seen[key] {
				return
			}
			seen[key] = true
			r.Checked++
			dst := filepath.Join(scratch, fmt.Sprint("state", r.Checked))
			if failed = os.Mkdir(dst, 0o755); failed != nil {
				return
			}
			if failed = img.Materialize(dst); failed != nil {
				return
			}
			for _, p := range check(dst, acked) {
				r.Violations = append(r.Violations, fmt.Sprintf("power cut %s (acknowledged: %v)\n\t\tpending: %s\n\t\t=> %s", at, acked, what, p))
			}
			failed = os.RemoveAll(dst)
		})
		if err = errors.Join(err, failed); err != nil {
			return r, err
		}
		r.Enumerated += n
	}
	return r, nil
}
