package jobstore

import "path/filepath"

// RescuePass returns the rescue pass of a Worker of root, as its rescue
// loop makes it each scan interval (the running jobs the Worker's view
// knows brought up to date, then each judged), for benchmarks, once a look
// made that view as the Worker's job loop does; close releases it. pass
// reports how many running jobs it judged.
func RescuePass(root string) (pass func() int, close func(), err error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, nil, err
	}
	c := newNextCache(abs)
	if _, _, err := c.look(); err != nil {
		c.close()
		return nil, nil, err
	}
	w := &Worker{root: abs}
	pass = func() int {
		dirs := c.runningDirs()
		w.rescue(dirs)
		return len(dirs)
	}
	return pass, c.close, nil
}

// WithViewScanned makes a Worker call f once its view's first full scan of
// the root has ended (seen by its rescue loop, within a scan interval):
// what it costs from then on is what it costs idle.
func WithViewScanned(f func()) WorkerOption {
	return func(o *workerOptions) { o.scanned = f }
}
