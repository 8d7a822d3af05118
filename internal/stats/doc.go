// Package stats decides a stochastic scenario from its runs with stated
// error rates. It is pure arithmetic: no clock, no randomness, no I/O.
//
// A Design names the rate a healthy agent reaches (PassRate), how far below
// it a rate must be to count as broken (Margin), and how sure each verdict
// must be (Confidence). Its test is Wald's sequential probability ratio
// test (SPRT) of p1 = PassRate against p0 = PassRate − Margin, with both
// error rates α = β = 1 − Confidence:
//
//	d := stats.Design{PassRate: 0.9, Margin: 0.1, Confidence: 0.95}
//	limit := d.Needed()               // 282: the most runs the guarantee needs
//	for passes, failures := 0, 0; passes+failures < limit; {
//		if runOnce() { passes++ } else { failures++ }
//		switch d.Decide(passes, failures) {
//		case stats.Pass: // the rate is above p0, at 95%
//		case stats.Fail: // the rate is below p1, at 95%
//		}
//	}
//	// still undecided at the limit: inconclusive
//
// After n runs with s passes and f = n − s failures the test's statistic
// is the likelihood ratio
//
//	Λ = (p1/p0)^s · ((1−p1)/(1−p0))^f
//
// and it passes as soon as Λ ≥ 1/α, fails as soon as Λ ≤ β. These are
// Wald's boundaries A = 1/α and B = β rather than his approximations
// (1−β)/α and β/(1−α): Λ is a nonnegative martingale with mean 1 when the
// rate is p0, so by Ville's inequality the chance that it ever reaches 1/α
// is at most α, however many times it is looked at and whenever the runs
// stop; likewise 1/Λ when the rate is p1. The error rates hold exactly,
// not approximately, and for every rate at or beyond p1 and p0, since the
// chance of passing grows with the true rate.
//
// The runs must stop somewhere (the scenario's `repeat:`). A test cut off
// at a limit ends undecided (inconclusive) with some probability, and an
// inconclusive verdict is neither a pass nor a fail: the guarantee
// "a rate ≥ p1 passes, and a rate ≤ p0 fails, each with probability ≥
// Confidence" then needs a limit large enough that the test has decided in
// time. The outcomes are Bernoulli, so the test's exact distribution is
// computed by dynamic programming over (runs, passes) (Operating), and
// Needed is the smallest limit at which the guarantee holds exactly. Below
// it a healthy agent ends inconclusive more often than 1 − Confidence
// allows; Operating says how often.
//
// The same likelihood ratios give the rate's anytime-valid confidence
// bounds (Lower, Upper): the test passes exactly when Lower reaches p0 and
// fails exactly when Upper falls below p1, so the bound a report prints is
// the reason for its verdict.
//
// References:
//   - A. Wald, Sequential tests of statistical hypotheses, Annals of
//     Mathematical Statistics 16(2):117–186, 1945.
//   - J. Ville, Étude critique de la notion de collectif, Gauthier-Villars,
//     1939 (the maximal inequality for nonnegative supermartingales).
//   - A. Ramdas, P. Grünwald, V. Vovk, G. Shafer, Game-theoretic statistics
//     and safe anytime-valid inference, Statistical Science 38(4):576–601,
//     2023 (likelihood ratios as e-processes; confidence sequences).
//   - C. J. Clopper, E. S. Pearson, The use of confidence or fiducial limits
//     illustrated in the case of the binomial, Biometrika 26(4):404–413,
//     1934 (the bounds of a fixed number of runs, Binomial).
package stats
