package stats

import "strconv"

// Rate prints a pass rate, margin or confidence as it was written (0.9,
// 0.85, 0.99999, 1), and one computed from written ones without the
// float's last digits (0.95 − 0.05 is 0.9, not 0.8999999999999999).
// Every view of a design prints it through Rate and Level, so that lint,
// the console, JUnit and HTML say the numbers the JSON report holds:
// four significant digits made 0.99999 "1" and its confidence "100%".
func Rate(v float64) string { return strconv.FormatFloat(v, 'g', 12, 64) }

// Level prints a confidence as a percentage, as written: 95%, 99.5%,
// 99.999%.
func Level(v float64) string { return Rate(v*100) + "%" }
