// Package jobview reads jobs and describes them for people and scripts,
// the same way for every command and for the web pages: a job's records
// as found on disk (ReadJob), the filters of list and the pages
// (JobFilter), the JSON of list and show, attempts, schedules, cancel
// requests, the ends of its logs, and times and progress as text.
package jobview
