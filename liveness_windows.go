package jobstore

import (
	"errors"
	"strconv"

	"golang.org/x/sys/windows"
)

// pidScope is one Windows machine. Windows does not reuse a pid while a
// handle to the process is open, and a reused pid has another creation time,
// which probeProcess compares.
func pidScope() string { return "windows" }

// probeProcess opens the process for limited query: no such pid is
// ERROR_INVALID_PARAMETER (dead); a process handle that is signalled has
// exited (not the exit code: a process may exit with STILL_ACTIVE's 259);
// the start token is the creation time (100 ns units since 1601).
func probeProcess(pid int) (procState, string) {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION|windows.SYNCHRONIZE, false, uint32(pid))
	if errors.Is(err, windows.ERROR_INVALID_PARAMETER) {
		return procDead, ""
	}
	if err != nil {
		return procUnknown, ""
	}
	defer windows.CloseHandle(h)
	// Needs SYNCHRONIZE as well as the query right.
	switch ev, err := windows.WaitForSingleObject(h, 0); {
	case err != nil:
		return procUnknown, ""
	case ev == windows.WAIT_OBJECT_0:
		return procDead, ""
	}
	var created, exited, kernel, user windows.Filetime
	if err := windows.GetProcessTimes(h, &created, &exited, &kernel, &user); err != nil {
		return procUnknown, ""
	}
	return procAlive, strconv.FormatUint(uint64(created.HighDateTime)<<32|uint64(created.LowDateTime), 10)
}
