package jobstore

import "path/filepath"

// RescuePass returns one rescue pass of a Worker of root, as its rescue
// loop makes each scan interval (a look at the root, then a judge of each
// running job seen), for benchmarks; close releases the pass's view of the
// root. pass reports how many running jobs it judged.
func RescuePass(root string) (pass func() (int, error), close func(), err error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, nil, err
	}
	w := &Worker{root: abs}
	c := newOwnedCache(abs)
	pass = func() (int, error) {
		if _, _, err := c.look(nil); err != nil {
			return 0, err
		}
		dirs := c.runningDirs()
		w.rescue(dirs)
		return len(dirs), nil
	}
	return pass, c.close, nil
}
