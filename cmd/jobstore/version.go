package main

import (
	"runtime/debug"
	"strings"
)

// buildVersion is what "jobstore --version" prints: the module version and
// the VCS revision the binary was built from, as the Go toolchain recorded
// them, and the Go version. A version the build did not record reads
// "(devel)", a revision it did not record "unknown"; "modified" follows a
// revision built with uncommitted changes.
func buildVersion(info *debug.BuildInfo, ok bool) string {
	version, revision, modified, goVersion := "(devel)", "unknown", false, "unknown"
	if ok && info != nil {
		if info.Main.Version != "" {
			version = info.Main.Version
		}
		if info.GoVersion != "" {
			goVersion = info.GoVersion
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				revision = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	var b strings.Builder
	b.WriteString("jobstore " + version + ", revision " + revision)
	if modified {
		b.WriteString(" (modified)")
	}
	b.WriteString(", built with " + goVersion + "\n")
	return b.String()
}
