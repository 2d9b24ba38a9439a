package serve

import (
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	code := m.Run()
	stopBrowser() // the browser tests' shared browser, if started
	os.Exit(code)
}
