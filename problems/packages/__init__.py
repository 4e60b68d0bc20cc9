"""Problem packages and the programs they judge with (ICPC/Kattis, testlib).

- `external`: running a package's own checker, output validator or input validator in the
  sandbox with its format's contract (testlib: `checker input output answer`, exit 0/1/2/3;
  Kattis: `validator input answer feedback_dir < output`, exit 42/43).
- `default_validator`: problemtools' default output validator (tokens, validator_flags), trusted.
- `icpc`: reading an ICPC/Kattis package folder into plain data; `importer` writes it.
- `checking`: what problems/judging.py asks of a suite judged by a package's checker.

problems/package_fidelity.py (outside, since it judges through problems/judging.py) judges a
package's labelled submissions as `verifyproblem` would.
"""
