package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// pathFS is the file system of the command line: an fs.FS whose names are
// paths as a user writes them, relative to a working directory, "../x"
// and absolute paths included. Names keep that form through fs.WalkDir
// and in errors, so every position and message shows a path as it was
// given. Symbolic links are followed like the files they point to; a walk
// does not descend into a linked directory (no cycles), but a linked
// directory named on the command line is walked.
//
// It breaks the fs.ValidPath rule on purpose: agenttest reads suites and
// configs wherever they are (a monorepo's ../agents/suites), and a rule
// that refused paths outside the working directory protected nothing
// while reports and symlinks could point anywhere.
type pathFS string

// osPath is the file name of a pathFS name.
func (d pathFS) osPath(name string) string {
	p := filepath.FromSlash(name)
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(string(d), p)
}

// named puts the name as given back into a path error.
func named(name string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return &fs.PathError{Op: pe.Op, Path: name, Err: pe.Err}
	}
	return err
}

// Open opens a file or directory.
func (d pathFS) Open(name string) (fs.File, error) {
	f, err := os.Open(d.osPath(name))
	if err != nil {
		return nil, named(name, err)
	}
	return f, nil
}

// Stat follows symbolic links.
func (d pathFS) Stat(name string) (fs.FileInfo, error) {
	fi, err := os.Stat(d.osPath(name))
	return fi, named(name, err)
}

// ReadFile reads a whole file.
func (d pathFS) ReadFile(name string) ([]byte, error) {
	b, err := os.ReadFile(d.osPath(name))
	return b, named(name, err)
}

// ReadDir lists a directory, sorted by name.
func (d pathFS) ReadDir(name string) ([]fs.DirEntry, error) {
	es, err := os.ReadDir(d.osPath(name))
	return es, named(name, err)
}

var (
	_ fs.StatFS     = pathFS("")
	_ fs.ReadFileFS = pathFS("")
	_ fs.ReadDirFS  = pathFS("")
)
