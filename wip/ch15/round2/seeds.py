import sys, time, numpy as np
from course_attention.linear_attention import compare
seed = int(sys.argv[1])
t = time.perf_counter()
runs = compare.train_all(seed)
res = compare.chapter_results(runs)
print("SEED", seed, "wall %.1f" % (time.perf_counter() - t))
print(" seconds", {k: round(r.seconds, 1) for k, r in runs.items()}, "total %.1f" % sum(r.seconds for r in runs.values()))
print(" trainacc", {k: round(r.train_accuracy, 3) for k, r in runs.items()})
print(" baseline", np.round(res.baseline, 3).tolist(), "pairs", compare.PAIRS)
for k, v in res.recall.items(): print("  %-12s" % k, np.round(v, 3).tolist())
try:
    compare.check_chapter_claims(res); print(" claims OK")
except AssertionError as e: print(" claims FAIL", str(e)[:300])
