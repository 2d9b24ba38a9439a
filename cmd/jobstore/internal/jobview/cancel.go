package jobview

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/axqua/jobstore"
	"github.com/axqua/jobstore/cmd/jobstore/internal/remedy"
	"github.com/axqua/jobstore/cmd/jobstore/internal/termtext"
)

// Requester is the default --by: "USER on HOST".
func Requester() string {
	user := os.Getenv("USER")
	if user == "" {
		user = os.Getenv("USERNAME") // Windows
	}
	if user == "" {
		user = "unknown user"
	}
	host, err := os.Hostname()
	if err != nil {
		return user
	}
	return user + " on " + host
}

// RequestText is `by "X" at T, reason "R"` for output lines.
func RequestText(c *jobstore.CancelRequest) string {
	var b strings.Builder
	if c.RequestedBy != "" {
		fmt.Fprintf(&b, "by %q ", c.RequestedBy)
	}
	b.WriteString("at " + FmtTime(c.RequestedAt))
	if c.Reason != "" {
		fmt.Fprintf(&b, ", reason %q", c.Reason)
	}
	return termtext.OneLine(b.String())
}

// ListCancelJSON and ShowCancelJSON are the cancel request in list's and
// show's JSON, present only when cancel.json Exists.
type ListCancelJSON struct {
	Cancel *jobstore.CancelRequest `json:"cancel,omitempty"`
}

type ShowCancelJSON struct {
	Cancel       *jobstore.CancelRequest `json:"cancel,omitempty"`
	CancelRecord *RecordInfo             `json:"cancel_record,omitempty"`
}

// RequestTextOrNone is RequestText, or "" for an unreadable request.
func RequestTextOrNone(c *jobstore.CancelRequest) string {
	if c == nil {
		return ""
	}
	return RequestText(c)
}

// ReadCancel reads dir's cancel.json as show reads the other records: the
// request (nil if none or unreadable) and how the file was found.
func ReadCancel(dir jobstore.JobDir) (*jobstore.CancelRequest, RecordInfo) {
	dir = JobDirArg(string(dir))
	if err := linkedJobDir(dir); err != nil {
		return nil, RecordInfo{File: jobstore.CancelFile, Current: jobstore.CancelSchemaVersion, Err: err}
	}
	var raw json.RawMessage
	info := readRecord(dir.CancelPath(), jobstore.CancelFile, "read cancel request", jobstore.CancelSchemaVersion, &raw)
	if info.Err != nil || !info.Present {
		return nil, info
	}
	c, _, err := jobstore.DecodeCancel(raw)
	if err == nil && c.JobID != dir.ID() {
		err = &jobstore.Error{Subject: "job_id", Sentinel: jobstore.ErrInvalid,
			Msg: fmt.Sprintf("%q differs from the directory name %q", c.JobID, dir.ID())}
	}
	info.Err = at(err, "read cancel request", dir.CancelPath())
	if err != nil && c != nil && c.JobID != dir.ID() {
		info.Err = remedy.WithCLIRemedy(info.Err, "the request names another job; remove it if it was copied here by mistake")
	}
	info.Migrated = err == nil && info.Written != nil && *info.Written != info.Current
	if err != nil {
		return nil, info
	}
	return c, info
}

// CancelNote is what show and list say about a cancel request (c and
// info from ReadCancel), given the job's status: "on request" for a job
// cancelled, "cancel requested too late" for one that ended otherwise,
// "cancel requested" for one still queued or running; "" when there is none.
func CancelNote(c *jobstore.CancelRequest, info RecordInfo, st *jobstore.JobStatus) string {
	switch {
	case !info.Present && info.Err == nil:
		return ""
	case st != nil && st.State == jobstore.Cancelled:
		return "on request"
	case st != nil && st.State.Terminal():
		return "cancel requested too late"
	case c == nil:
		return "cancel requested (" + jobstore.CancelFile + " unreadable)"
	}
	return "cancel requested"
}

// CancelRow is show's "cancel" line: the request, or why it cannot be read;
// "" when there is none.
func CancelRow(dir jobstore.JobDir, st *jobstore.JobStatus) string {
	c, info := ReadCancel(dir)
	note := CancelNote(c, info, st)
	switch {
	case note == "":
		return ""
	case c == nil:
		return note + ": " + strings.TrimPrefix(VersionText(info), "unreadable: ")
	}
	return note + " " + RequestText(c)
}
