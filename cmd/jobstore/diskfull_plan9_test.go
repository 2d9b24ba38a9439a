package main

import "errors"

// errDiskFull is the OS's "no space left" error, which isDiskFull knows.
var errDiskFull = errors.New("file system full")
