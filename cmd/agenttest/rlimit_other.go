//go:build !unix

package main

import "errors"

// openFileLimit is unknown where there is no RLIMIT_NOFILE.
func openFileLimit() (uint64, error) { return 0, errors.New("no open-file limit on this system") }
