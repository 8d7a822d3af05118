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

// named puts the name as given back into a path error, and says when the
// name is a symbolic link to nothing: "no such file or directory" alone
// contradicts `ls`, which lists the link.
func (d pathFS) named(name string, err error) error {
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		cause := pe.Err
		if errors.Is(cause, fs.ErrNotExist) {
			if target, lerr := os.Readlink(d.osPath(name)); lerr == nil {
				cause = &brokenLinkError{target: target}
			}
		}
		return &fs.PathError{Op: pe.Op, Path: name, Err: cause}
	}
	return err
}

// brokenLinkError is the cause of a path error on a symbolic link whose
// target does not exist. It is still fs.ErrNotExist.
type brokenLinkError struct {
	// target is the link's content, as `ls -l` shows it (relative to the
	// link's directory unless absolute).
	target string
}

func (e *brokenLinkError) Error() string {
	return "a symbolic link to " + e.target + ", which does not exist"
}

func (e *brokenLinkError) Unwrap() error { return fs.ErrNotExist }

// Open opens a file or directory.
func (d pathFS) Open(name string) (fs.File, error) {
	f, err := os.Open(d.osPath(name))
	if err != nil {
		return nil, d.named(name, err)
	}
	return f, nil
}

// Stat follows symbolic links.
func (d pathFS) Stat(name string) (fs.FileInfo, error) {
	fi, err := os.Stat(d.osPath(name))
	return fi, d.named(name, err)
}

// ReadFile reads a whole file.
func (d pathFS) ReadFile(name string) ([]byte, error) {
	b, err := os.ReadFile(d.osPath(name))
	return b, d.named(name, err)
}

// ReadDir lists a directory, sorted by name.
func (d pathFS) ReadDir(name string) ([]fs.DirEntry, error) {
	es, err := os.ReadDir(d.osPath(name))
	return es, d.named(name, err)
}

var (
	_ fs.StatFS     = pathFS("")
	_ fs.ReadFileFS = pathFS("")
	_ fs.ReadDirFS  = pathFS("")
)
