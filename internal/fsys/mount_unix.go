//go:build unix

package fsys

// crossesDevice reports whether sub, a directory opened in parent, is on
// another filesystem: a mount point, which RemoveAll never descends into.
func crossesDevice(parent, sub *Dir) (bool, error) {
	p, err := parent.ID()
	if err != nil {
		return false, err
	}
	s, err := sub.ID()
	if err != nil {
		return false, err
	}
	return p.dev != s.dev, nil
}
