//go:build unix

package main

import (
	"fmt"
	"syscall"
)

// writable checks that the process may write path (a directory to create
// a file in, or a special file to write into) without creating anything:
// access(2) also answers for root, refusing a read-only file system.
func writable(path string) error {
	const wOK = 2 // W_OK
	if err := syscall.Access(path, wOK); err != nil {
		return fmt.Errorf("cannot write there: %w", err)
	}
	return nil
}
