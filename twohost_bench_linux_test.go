package jobstore_test

import (
	"testing"

	"github.com/axqua/jobstore"
)

// BenchmarkWriteStatusByFilesystem is what a durable WriteStatus (and a
// NoSync one) costs on the kit's GlusterFS volume against the repository's
// own disk, in the same run; the brick lives on the machine's disk too, so
// the ratio is GlusterFS's own cost (docs/platforms.md):
//
//	go test -run '^$' -bench 'WriteStatusByFilesystem' -count 6 . | tee fs.txt
//	benchstat -col /fs fs.txt
//
// It needs root and the kit's volume (bash .ci/gluster.sh start), and skips
// otherwise.
func BenchmarkWriteStatusByFilesystem(b *testing.B) {
	filesystems := []struct {
		name string
		root func(b *testing.B) string
	}{
		{"local", benchDir},
		{"glusterfs", func(b *testing.B) string { a, _, _ := mountGlusterTwice(b, false); return a }},
	}
	for _, impl := range []struct {
		name string
		opts []jobstore.WriteOption
	}{{"durable", nil}, {"nosync", []jobstore.WriteOption{jobstore.NoSync()}}} {
		for _, fs := range filesystems {
			b.Run("impl="+impl.name+"/fs="+fs.name, func(b *testing.B) {
				dir := benchJob(b, fs.root(b), "job")
				for i := 0; b.Loop(); i++ {
					if err := jobstore.WriteStatus(dir, benchStatus(i), impl.opts...); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
