//go:build unix

package main

import (
	"fmt"
	"syscall"
)

// writable checks that the process may write the special file path (a
// device, a named pipe) without opening it: access(2), which also refuses
// a read-only file system to root.
func writable(path string) error {
	const wOK = 2 // W_OK
	if err := syscall.Access(path, wOK); err != nil {
		return fmt.Errorf("cannot write there: %w", err)
	}
	return nil
}
