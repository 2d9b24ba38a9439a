package proc

import (
	"errors"
	"strconv"

	"golang.org/x/sys/windows"
)

// scope is one Windows machine. Windows does not reuse a pid while a handle
// to the process is open, and a reused pid has another creation time, which
// probe compares.
func scope() string { return "windows" }

// probe opens the process for limited query: no such pid is
// ERROR_INVALID_PARAMETER (dead); a process handle that is signalled has
// exited (not the exit code: a process may exit with STILL_ACTIVE's 259);
// the start token is the creation time (100 ns units since 1601).
func probe(pid int) (State, string) {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION|windows.SYNCHRONIZE, false, uint32(pid))
	if errors.Is(err, windows.ERROR_INVALID_PARAMETER) {
		return Dead, ""
	}
	if err != nil {
		return Unknown, ""
	}
	defer windows.CloseHandle(h)
	// Needs SYNCHRONIZE as well as the query right.
	switch ev, err := windows.WaitForSingleObject(h, 0); {
	case err != nil:
		return Unknown, ""
	case ev == windows.WAIT_OBJECT_0:
		return Dead, ""
	}
	var created, exited, kernel, user windows.Filetime
	if err := windows.GetProcessTimes(h, &created, &exited, &kernel, &user); err != nil {
		return Unknown, ""
	}
	return Alive, strconv.FormatUint(uint64(created.HighDateTime)<<32|uint64(created.LowDateTime), 10)
}
