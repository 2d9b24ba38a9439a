package jobstore_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The abstract file system of the power-loss test (powerloss_linux_test.go
// documents the persistence model): directories of named entries pointing
// at inodes, the traced calls of one operation translated into entry
// changes, writes and syncs, and the enumeration of the states a power cut
// after each call may leave.

// mInode is a file or a directory of the abstract file system.
type mInode struct {
	dir     bool
	data    []byte
	entries map[string]int // name -> inode, for a directory
}

// fsImage is an abstract file system: inodes by number, 1 is the root.
type fsImage []mInode

const rootIno = 1

func (img fsImage) clone() fsImage {
	c := make(fsImage, len(img))
	for i, n := range img {
		c[i] = mInode{dir: n.dir, data: slices.Clone(n.data)}
		if n.entries != nil {
			c[i].entries = make(map[string]int, len(n.entries))
			for k, v := range n.entries {
				c[i].entries[k] = v
			}
		}
	}
	return c
}

// newInode adds an empty inode and returns its number.
func (img *fsImage) newInode(dir bool) int {
	n := mInode{dir: dir}
	if dir {
		n.entries = map[string]int{}
	}
	*img = append(*img, n)
	return len(*img) - 1
}

// lookup resolves rel, a slash-separated path under the root.
func (img fsImage) lookup(rel string) (int, bool) {
	ino := rootIno
	if rel == "." {
		return ino, true
	}
	for _, name := range strings.Split(rel, "/") {
		n := img[ino]
		if !n.dir {
			return 0, false
		}
		next, ok := n.entries[name]
		if !ok {
			return 0, false
		}
		ino = next
	}
	return ino, true
}

func (img fsImage) writeAt(ino int, off int64, p []byte) {
	d := img[ino].data
	if end := int(off) + len(p); end > len(d) {
		d = append(d, make([]byte, end-len(d))...)
	}
	copy(d[off:], p)
	img[ino].data = d
}

// render is a canonical text of what is reachable from the root.
func (img fsImage) render() string {
	var b strings.Builder
	var walk func(ino int, path string)
	walk = func(ino int, path string) {
		n := img[ino]
		if !n.dir {
			fmt.Fprintf(&b, "%s %q\n", path, n.data)
			return
		}
		fmt.Fprintf(&b, "%s/\n", path)
		names := make([]string, 0, len(n.entries))
		for name := range n.entries {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			walk(n.entries[name], path+"/"+name)
		}
	}
	walk(rootIno, ".")
	return b.String()
}

// materialize writes what is reachable from the root into dst, which exists.
func (img fsImage) materialize(dst string) error {
	var walk func(ino int, path string) error
	walk = func(ino int, path string) error {
		for name, child := range img[ino].entries {
			p := filepath.Join(path, name)
			var err error
			if img[child].dir {
				if err = os.Mkdir(p, 0o755); err == nil {
					err = walk(child, p)
				}
			} else {
				err = os.WriteFile(p, img[child].data, 0o644)
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
	return walk(rootIno, dst)
}

// snapshotTree reads the real tree under root into an image.
func snapshotTree(t testing.TB, root string) fsImage {
	t.Helper()
	img := fsImage{{}} // inode 0 is unused
	var walk func(path string) int
	walk = func(path string) int {
		fi, err := os.Lstat(path)
		require.NoError(t, err)
		switch {
		case fi.IsDir():
			ino := img.newInode(true)
			des, err := os.ReadDir(path)
			require.NoError(t, err)
			for _, de := range des {
				child := walk(filepath.Join(path, de.Name()))
				img[ino].entries[de.Name()] = child
			}
			return ino
		case fi.Mode().IsRegular():
			ino := img.newInode(false)
			img[ino].data, err = os.ReadFile(path)
			require.NoError(t, err)
			return ino
		default:
			t.Fatalf("the power-loss model knows files and directories, not %s (%v)", path, fi.Mode())
			return 0
		}
	}
	require.Equal(t, rootIno, walk(root))
	return img
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

// modelOp is one traced call as the model sees it.
type modelOp struct {
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
func (op modelOp) outcomes() []outcome {
	if op.kind == opData && !op.trunc && len(op.data) > 1 {
		return []outcome{lost, persisted, zeroFilled, halfWritten}
	}
	return []outcome{lost, persisted}
}

// owners are the inodes whose fsync makes op durable.
func (op modelOp) owners() []int {
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

func (op modelOp) String() string { return op.desc }

// describe names a traced call briefly, with paths relative to root.
func describe(e fileEvent, root string) string {
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

func (img fsImage) apply(op modelOp, how outcome) {
	switch {
	case how == lost || op.kind == opSync:
	case op.kind == opEntries:
		for _, c := range op.changes {
			if c.ino == 0 {
				delete(img[c.dir].entries, c.name)
			} else {
				img[c.dir].entries[c.name] = c.ino
			}
		}
	case op.trunc:
		if d := img[op.ino].data; int(op.off) < len(d) {
			img[op.ino].data = d[:op.off]
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

// crashModel is one traced call on the abstract file system.
type crashModel struct {
	base fsImage // durable before the call; plus an unnamed inode for each the call creates
	ops  []modelOp
}

// maxStatesPerCrashPoint bounds the enumeration (a trace with many unsynced
// operations would explode it).
const maxStatesPerCrashPoint = 1 << 16

// buildCrashModel translates evs, the calls of one traced operation on the
// tree under root, into model operations, replaying them on a copy of base
// (the tree before the call) to resolve names and descriptors to inodes.
func buildCrashModel(root string, base fsImage, evs []fileEvent) (*crashModel, error) {
	m := &crashModel{base: base.clone()}
	vol := base.clone() // the volatile state: every call applied
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
		dir, ok = vol.lookup(r)
		if !ok || !vol[dir].dir {
			return 0, "", fmt.Errorf("no directory %s in the model", filepath.Dir(p))
		}
		return dir, filepath.Base(p), nil
	}
	newInode := func(dir bool) int {
		ino := vol.newInode(dir)
		if m.base.newInode(dir) != ino {
			panic("model and volatile state disagree on inode numbers")
		}
		return ino
	}
	for _, e := range evs {
		if _, in := rel(e.Path); !in || !e.ok() {
			continue // a marker, or a failed call, which changed nothing
		}
		var ops []modelOp
		switch e.Name {
		case "openat":
			dir, name, err := parentOf(e.Path)
			if err != nil && e.Path != root {
				return nil, fmt.Errorf("%w: %s", err, e.Line)
			}
			ino := rootIno
			if e.Path != root {
				var ok bool
				if ino, ok = vol[dir].entries[name]; !ok {
					if !hasFlag(e.Flags, "O_CREAT") {
						return nil, fmt.Errorf("opened a file the model does not have: %s", e.Line)
					}
					ino = newInode(false)
					ops = append(ops, modelOp{kind: opEntries, changes: []entryChange{{dir, name, ino}}})
				} else if hasFlag(e.Flags, "O_TRUNC") {
					ops = append(ops, modelOp{kind: opData, ino: ino, trunc: true})
				}
			}
			f := &openFile{ino: ino}
			if hasFlag(e.Flags, "O_APPEND") {
				f.off = int64(len(vol[ino].data))
			}
			fds[e.FD] = f
		case "write", "pwrite64", "ftruncate", "fsync", "fdatasync":
			f, ok := fds[e.FD]
			if !ok {
				return nil, fmt.Errorf("fd %d not opened in the trace: %s", e.FD, e.Line)
			}
			switch e.Name {
			case "write":
				ops = append(ops, modelOp{kind: opData, ino: f.ino, off: f.off, data: e.Data})
				f.off += int64(len(e.Data))
			case "pwrite64":
				ops = append(ops, modelOp{kind: opData, ino: f.ino, off: e.Offset, data: e.Data})
			case "ftruncate":
				ops = append(ops, modelOp{kind: opData, ino: f.ino, off: e.Offset, trunc: true})
			default:
				ops = append(ops, modelOp{kind: opSync, ino: f.ino})
			}
		case "close":
			delete(fds, e.FD)
		case "mkdir", "mkdirat":
			dir, name, err := parentOf(e.Path)
			if err != nil {
				return nil, fmt.Errorf("%w: %s", err, e.Line)
			}
			ops = append(ops, modelOp{kind: opEntries, changes: []entryChange{{dir, name, newInode(true)}}})
		case "renameat", "renameat2", "linkat":
			if hasFlag(e.Flags, "RENAME_EXCHANGE") || hasFlag(e.Flags, "RENAME_WHITEOUT") {
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
			ino, ok := vol[odir].entries[oname]
			if !ok {
				return nil, fmt.Errorf("renamed a file the model does not have: %s", e.Line)
			}
			changes := []entryChange{{ndir, nname, ino}}
			if e.Name != "linkat" && e.Path != e.NewPath {
				changes = append(changes, entryChange{odir, oname, 0})
			}
			ops = append(ops, modelOp{kind: opEntries, changes: changes})
		case "unlinkat":
			dir, name, err := parentOf(e.Path)
			if err != nil {
				return nil, fmt.Errorf("%w: %s", err, e.Line)
			}
			ops = append(ops, modelOp{kind: opEntries, changes: []entryChange{{dir, name, 0}}})
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
func (m *crashModel) durable(i, k int) bool {
	for _, owner := range m.ops[i].owners() {
		if !slices.ContainsFunc(m.ops[i+1:k], func(s modelOp) bool { return s.kind == opSync && s.ino == owner }) {
			return false
		}
	}
	return true
}

// crashStates calls visit with every state a power cut after the first k
// operations may leave, and what the cut did to the pending operations.
// It returns how many states it enumerated.
func (m *crashModel) crashStates(k int, visit func(img fsImage, what string)) (int, error) {
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
		img := m.base.clone()
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

// TestCrashModel_EnumeratesWhatAPowerCutMayLeave checks the model on a
// hand-written trace: a temp file written and renamed over a record with no
// fsync at all, then the same with both fsyncs.
func TestCrashModel_EnumeratesWhatAPowerCutMayLeave(t *testing.T) {
	const root = "/r"
	ev := func(name, path, newPath string, fd int, flags, data string) fileEvent {
		return fileEvent{sysCall: sysCall{Name: name, Line: name + " " + path}, Path: path, NewPath: newPath,
			FD: fd, Flags: flags, Data: []byte(data)}
	}
	base := fsImage{{}}
	dir := base.newInode(true)
	rec := base.newInode(false)
	base[dir].entries["rec"] = rec
	base[rec].data = []byte("old")
	replace := []fileEvent{
		ev("openat", "/r/.rec1", "", 3, "O_RDWR|O_CREAT|O_EXCL", ""),
		ev("write", "/r/.rec1", "", 3, "", "new!"),
		ev("close", "/r/.rec1", "", 3, "", ""),
		ev("renameat", "/r/.rec1", "/r/rec", -1, "", ""),
	}
	contents := func(m *crashModel, k int) (n int, seen []string) {
		n, err := m.crashStates(k, func(img fsImage, _ string) {
			ino, ok := img.lookup("rec")
			s := "(missing)"
			if ok {
				s = string(img[ino].data)
			}
			if !slices.Contains(seen, s) {
				seen = append(seen, s)
			}
		})
		require.NoError(t, err)
		slices.Sort(seen)
		return n, seen
	}

	t.Run("without fsync every mix of the pending operations is reachable", func(t *testing.T) {
		m, err := buildCrashModel(root, base, replace)
		require.NoError(t, err)
		require.Len(t, m.ops, 3, "create, write, rename")
		n, seen := contents(m, len(m.ops))
		assert.Equal(t, 2*4*2, n, "create lost/kept x write 4 outcomes x rename lost/kept")
		assert.Equal(t, []string{"", "\x00\x00\x00\x00", "ne", "new!", "old"}, seen)
		n, seen = contents(m, 0)
		assert.Equal(t, 1, n)
		assert.Equal(t, []string{"old"}, seen)
	})

	t.Run("with the file and directory fsynced only the new record remains", func(t *testing.T) {
		synced := slices.Insert(slices.Clone(replace), 2, ev("fsync", "/r/.rec1", "", 3, "", ""))
		synced = append(synced,
			ev("openat", "/r", "", 4, "O_RDONLY", ""),
			ev("fsync", "/r", "", 4, "", ""))
		m, err := buildCrashModel(root, base, synced)
		require.NoError(t, err)
		n, seen := contents(m, len(m.ops))
		assert.Equal(t, 1, n)
		assert.Equal(t, []string{"new!"}, seen)
		_, seen = contents(m, len(m.ops)-1) // before the directory fsync
		assert.Equal(t, []string{"new!", "old"}, seen)
	})

	t.Run("a call the model cannot follow is an error, not a guess", func(t *testing.T) {
		_, err := buildCrashModel(root, base, []fileEvent{ev("write", "/r/rec", "", 9, "", "x")})
		assert.ErrorContains(t, err, "fd 9 not opened")
		_, err = buildCrashModel(root, base, []fileEvent{ev("renameat2", "/r/rec", "/r/x", -1, "RENAME_EXCHANGE", "")})
		assert.ErrorContains(t, err, "no rule")
	})
}
