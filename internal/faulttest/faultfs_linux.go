package faulttest

import (
	"context"
	"fmt"
	"sync"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// Op is an operation the fault layer can fail and counts.
type Op string

const (
	Write    Op = "write"    // write(2) to a file (each FUSE write request)
	Fsync    Op = "fsync"    // fsync(2) of a file
	FsyncDir Op = "fsyncdir" // fsync(2) of a directory
	Flush    Op = "flush"    // close(2) of a file descriptor
	Rename   Op = "rename"   // rename(2) and renameat2(2); matched on the old or the new name
	Open     Op = "open"     // open(2) of an existing file (not a create); Linux reopens once after ESTALE, so one open(2) may count twice
	Read     Op = "read"     // read(2) of a file (each FUSE read request)
	Opendir  Op = "opendir"  // open(2) of a directory
	Unlink   Op = "unlink"   // unlink(2) of a file; matched on its name
	Rmdir    Op = "rmdir"    // rmdir(2) of a directory; matched on its name
)

// Match selects files by base name. The mount's root directory is named "".
type Match func(name string) bool

// Named matches one base name.
func Named(name string) Match { return func(n string) bool { return n == name } }

// Fault makes Op on files that Match fail with Errno. Times > 0 fails only
// that many calls, then lets the rest through (as Linux does after a failed
// fsync, whose retry may "succeed"); 0 fails every call.
type Fault struct {
	Op    Op
	Match Match
	Errno syscall.Errno
	Times int
}

// Call is one operation the fault layer saw.
type Call struct {
	Op      Op
	Name    string        // base name of the file or directory (for Rename, the old name)
	NewName string        // for Rename, the new name
	Errno   syscall.Errno // the injected error, or 0 if the call went through
}

// FS is a mounted faulty loopback filesystem: what is done under Mountpoint
// happens under Backing, unless a Fault says otherwise.
type FS struct {
	Mountpoint string // the faulty view: point the code under test here
	Backing    string // the real directory: read the truth here

	server *fuse.Server
	mu     sync.Mutex
	faults []*Fault
	used   map[*Fault]int
	calls  []Call
}

// Mount mounts a faulty loopback of backing on mountpoint (both existing
// directories). It needs /dev/fuse and, unless root, fusermount3.
func Mount(backing, mountpoint string) (*FS, error) {
	var st syscall.Stat_t
	if err := syscall.Stat(backing, &st); err != nil {
		return nil, fmt.Errorf("faulttest: stat %s: %w", backing, err)
	}
	f := &FS{Mountpoint: mountpoint, Backing: backing, used: map[*Fault]int{}}
	root := &node{LoopbackNode: &fs.LoopbackNode{RootData: &fs.LoopbackRoot{Path: backing, Dev: uint64(st.Dev)}}, layer: f}
	root.RootData.RootNode = root
	server, err := fs.Mount(mountpoint, root, &fs.Options{
		MountOptions: fuse.MountOptions{FsName: "jobstore-faulttest", Name: "faulttest"},
	})
	if err != nil {
		return nil, fmt.Errorf("faulttest: mount %s on %s: %w", backing, mountpoint, err)
	}
	f.server = server
	return f, nil
}

// Unmount unmounts the filesystem and stops its server.
func (f *FS) Unmount() error { return f.server.Unmount() }

// Inject adds a fault. Faults are tried in the order added; the first that
// matches a call decides it.
func (f *FS) Inject(ft Fault) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.faults = append(f.faults, &ft)
}

// Clear removes every fault and forgets every call.
func (f *FS) Clear() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.faults, f.used, f.calls = nil, map[*Fault]int{}, nil
}

// Calls returns the calls of op on files that m matches (either name, for
// a rename), in order.
func (f *FS) Calls(op Op, m Match) []Call {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Call
	for _, c := range f.calls {
		if c.Op == op && (m(c.Name) || c.Op == Rename && m(c.NewName)) {
			out = append(out, c)
		}
	}
	return out
}

// check records a call and returns the errno a fault injects for it, or 0.
func (f *FS) check(op Op, name, newName string) syscall.Errno {
	f.mu.Lock()
	defer f.mu.Unlock()
	var errno syscall.Errno
	for _, ft := range f.faults {
		if ft.Op != op || !(ft.Match(name) || op == Rename && ft.Match(newName)) {
			continue
		}
		if ft.Times > 0 && f.used[ft] >= ft.Times {
			continue
		}
		f.used[ft]++
		errno = ft.Errno
		break
	}
	f.calls = append(f.calls, Call{Op: op, Name: name, NewName: newName, Errno: errno})
	return errno
}

// node is a loopback node whose operations pass through the fault layer.
// Every node below the root is one too (WrapChild).
type node struct {
	*fs.LoopbackNode
	layer *FS
}

// The operations the fault layer serves; the rest are the loopback's own.
var (
	_ fs.NodeWrapChilder    = (*node)(nil)
	_ fs.NodeWriter         = (*node)(nil)
	_ fs.NodeWritever       = (*node)(nil)
	_ fs.NodeFsyncer        = (*node)(nil)
	_ fs.NodeFlusher        = (*node)(nil)
	_ fs.NodeRenamer        = (*node)(nil)
	_ fs.NodeOpendirHandler = (*node)(nil)
	_ fs.NodeCreater        = (*node)(nil)
	_ fs.NodeOpener         = (*node)(nil)
	_ fs.NodeReader         = (*node)(nil)
	_ fs.NodeUnlinker       = (*node)(nil)
	_ fs.NodeRmdirer        = (*node)(nil)
	_ fs.FileFsyncdirer     = dirHandle{}
)

func (n *node) WrapChild(ctx context.Context, ops fs.InodeEmbedder) fs.InodeEmbedder {
	return &node{LoopbackNode: ops.(*fs.LoopbackNode), layer: n.layer}
}

// Create and Open hand out file handles without passthrough: as root,
// go-fuse would otherwise let the kernel write to the backing file directly
// (FOPEN_PASSTHROUGH), and no write would reach the fault layer.
func (n *node) Create(ctx context.Context, name string, flags uint32, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	inode, fh, fuseFlags, errno := n.LoopbackNode.Create(ctx, name, flags, mode, out)
	if errno != 0 {
		return nil, nil, 0, errno
	}
	return inode, noPassthrough{fh.(*fs.LoopbackFile)}, fuseFlags, 0
}

func (n *node) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	return n.open(Open, ctx, flags, n.LoopbackNode.Open, func(fh fs.FileHandle) (fs.FileHandle, syscall.Errno) {
		return noPassthrough{fh.(*fs.LoopbackFile)}, 0
	})
}

// open is an open of n that the layer may fail (op): through the loopback's
// open, its handle then wrapped so that the layer sees what is done with it.
func (n *node) open(op Op, ctx context.Context, flags uint32,
	open func(context.Context, uint32) (fs.FileHandle, uint32, syscall.Errno),
	wrap func(fs.FileHandle) (fs.FileHandle, syscall.Errno)) (fs.FileHandle, uint32, syscall.Errno) {
	if errno := n.layer.check(op, n.name(), ""); errno != 0 {
		return nil, 0, errno
	}
	fh, fuseFlags, errno := open(ctx, flags)
	if errno != 0 {
		return nil, 0, errno
	}
	w, errno := wrap(fh)
	if errno != 0 {
		return nil, 0, errno
	}
	return w, fuseFlags, 0
}

// noPassthrough is a loopback file whose I/O goes through the server.
type noPassthrough struct{ *fs.LoopbackFile }

func (noPassthrough) PassthroughFd() (int, bool) { return -1, false }

// name is the node's base name now (a rename changes it).
func (n *node) name() string {
	name, _ := n.EmbeddedInode().Parent()
	return name
}

func (n *node) Read(ctx context.Context, f fs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if errno := n.layer.check(Read, n.name(), ""); errno != 0 {
		return nil, errno
	}
	return f.(fs.FileReader).Read(ctx, dest, off)
}

func (n *node) Write(ctx context.Context, f fs.FileHandle, data []byte, off int64) (uint32, syscall.Errno) {
	if errno := n.layer.check(Write, n.name(), ""); errno != 0 {
		return 0, errno
	}
	return f.(fs.FileWriter).Write(ctx, data, off)
}

func (n *node) Writev(ctx context.Context, f fs.FileHandle, data [][]byte, off int64) (uint32, syscall.Errno) {
	if errno := n.layer.check(Write, n.name(), ""); errno != 0 {
		return 0, errno
	}
	return f.(fs.FileWritever).Writev(ctx, data, off)
}

// Fsync serves fsync(2) of files. Directories come through dirHandle.
func (n *node) Fsync(ctx context.Context, f fs.FileHandle, flags uint32) syscall.Errno {
	if errno := n.layer.check(Fsync, n.name(), ""); errno != 0 {
		return errno
	}
	if fsy, ok := f.(fs.FileFsyncer); ok {
		return fsy.Fsync(ctx, flags)
	}
	return syscall.ENOTSUP
}

func (n *node) Flush(ctx context.Context, f fs.FileHandle) syscall.Errno {
	if errno := n.layer.check(Flush, n.name(), ""); errno != 0 {
		return errno
	}
	if fl, ok := f.(fs.FileFlusher); ok {
		return fl.Flush(ctx)
	}
	return 0
}

func (n *node) Rename(ctx context.Context, name string, newParent fs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	if errno := n.layer.check(Rename, name, newName); errno != 0 {
		return errno
	}
	return n.LoopbackNode.Rename(ctx, name, newParent, newName, flags)
}

func (n *node) Unlink(ctx context.Context, name string) syscall.Errno {
	if errno := n.layer.check(Unlink, name, ""); errno != 0 {
		return errno
	}
	return n.LoopbackNode.Unlink(ctx, name)
}

func (n *node) Rmdir(ctx context.Context, name string) syscall.Errno {
	if errno := n.layer.check(Rmdir, name, ""); errno != 0 {
		return errno
	}
	return n.LoopbackNode.Rmdir(ctx, name)
}

// OpendirHandle wraps the loopback's directory handle: the kernel sends a
// directory fsync to the handle (FUSE_FSYNCDIR), not to the node.
func (n *node) OpendirHandle(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	return n.open(Opendir, ctx, flags, n.LoopbackNode.OpendirHandle, func(fh fs.FileHandle) (fs.FileHandle, syscall.Errno) {
		ld, ok := fh.(loopbackDir)
		if !ok {
			return nil, syscall.ENOTSUP // go-fuse changed; the layer cannot wrap this handle
		}
		return dirHandle{loopbackDir: ld, node: n}, 0
	})
}

// loopbackDir is what go-fuse's loopback directory handle implements.
type loopbackDir interface {
	fs.FileReaddirenter
	fs.FileReleasedirer
	fs.FileSeekdirer
	fs.FileFsyncdirer
}

type dirHandle struct {
	loopbackDir
	node *node
}

func (d dirHandle) Fsyncdir(ctx context.Context, flags uint32) syscall.Errno {
	if errno := d.node.layer.check(FsyncDir, d.node.name(), ""); errno != 0 {
		return errno
	}
	return d.loopbackDir.Fsyncdir(ctx, flags)
}
