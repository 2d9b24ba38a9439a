//go:build !linux

package dirstamp

// Inodes returns the entries of the directory that are directories or of
// unknown type (never ".", ".."), each with inode number 0: the listing
// read here does not give it.
func (d *Dir) Inodes() (map[string]uint64, error) {
	names, err := d.Names()
	if err != nil {
		return nil, err
	}
	m := make(map[string]uint64, len(names))
	for _, name := range names {
		m[name] = 0
	}
	return m, nil
}
