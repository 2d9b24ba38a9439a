package serve

import (
	"embed"
	"io/fs"
	"net/http"
)

// webFiles are the pages' templates (web/*.html) and the files served as
// they are under /static/ (web/static: the script and the style sheet).
//
//go:embed web
var webFiles embed.FS

// staticFiles serves web/static.
func staticFiles() http.Handler {
	sub, err := fs.Sub(webFiles, "web/static")
	if err != nil {
		panic(err) // embedded at build time: cannot fail
	}
	return http.FileServerFS(sub)
}
