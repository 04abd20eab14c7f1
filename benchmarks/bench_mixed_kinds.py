"""How often MixedNB's kind inference calls simulated integer columns counts.

Prints, for columns of counts (Poisson, mixtures, negative binomial) and of
codes, ratings and years, the share of simulated columns that MixedNB infers
as 'poisson' (and the kind it gives most often), for a few numbers of rows.

    python benchmarks/bench_mixed_kinds.py [--reps 300]
"""

from __future__ import annotations

import argparse
from collections import Counter

import numpy as np

from bayesrule import MixedNB


def columns(rng: np.random.Generator) -> dict[str, object]:
    return {
        **{
            f"poisson({lam})": (lambda n, lam=lam: rng.poisson(lam, n))
            for lam in (0.7, 1, 2, 4, 6, 10)
        },
        "poisson mixture 1|4": lambda n: rng.poisson(rng.choice([1, 4], n)),
        "negative binomial": lambda n: rng.negative_binomial(2, 0.3, n),
        "codes 0-2 uniform": lambda n: rng.integers(0, 3, n),
        "codes 0-9 uniform": lambda n: rng.integers(0, 10, n),
        "ratings 1-5 uniform": lambda n: rng.integers(1, 6, n),
        "ratings 1-7 uniform": lambda n: rng.integers(1, 8, n),
        "ratings 1-5, mostly 4-5": lambda n: rng.choice(
            [1, 2, 3, 4, 5], n, p=[0.05, 0.1, 0.2, 0.35, 0.3]
        ),
        "years 2007-2009": lambda n: rng.integers(2007, 2010, n),
        "body mass in grams": lambda n: rng.normal(3700, 450, n).round(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--reps", type=int, default=300)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    est = MixedNB()
    for n in (50, 80, 300):
        print(f"\n{n} rows: share inferred 'poisson' (most common kind)")
        for name, draw in columns(rng).items():
            kinds = Counter(
                est.infer_columns(np.asarray(draw(n), dtype=np.int64)[:, None])[0]
                for _ in range(args.reps)
            )
            print(
                f"  {name:26s} {kinds['poisson'] / args.reps:5.2f}  ({kinds.most_common(1)[0][0]})"
            )


if __name__ == "__main__":
    main()
