package result

import "iter"

// Scenarios yields each case of the run's files with its file, in file
// order, skipping nil files and cases: the walk every renderer makes.
func (r *Result) Scenarios() iter.Seq2[*File, *Case] {
	return func(yield func(*File, *Case) bool) {
		for _, f := range r.Files {
			if f == nil {
				continue
			}
			for _, c := range f.Cases {
				if c != nil && !yield(f, c) {
					return
				}
			}
		}
	}
}

// Cases yields what Scenarios does, then each run-level check (Checks)
// with a nil file.
func (r *Result) Cases() iter.Seq2[*File, *Case] {
	return func(yield func(*File, *Case) bool) {
		for f, c := range r.Scenarios() {
			if !yield(f, c) {
				return
			}
		}
		for _, c := range r.Checks {
			if c != nil && !yield(nil, c) {
				return
			}
		}
	}
}
