# %% md
(sec-linear-attention-explorer)=
## Explorer: accumulate or overwrite

The explorer below writes {glue:text}`ex_pairs` key–value pairs into a
{glue:text}`ex_dk` × {glue:text}`ex_dk` state, one pair per token, in the order
`a b c a d b a c`. The keys `a`, `b`, `c`, `d` are the unit vectors $e_1 \dots e_4$, so
they are orthogonal and row `a` of the state is exactly what key `a` reads. No interference,
then: whatever goes wrong below comes from the rule alone. Key `a` is written three times and
`b` and `c` twice, each time with a new value.

The top panel is the state $S_t$ after the first $t$ tokens ("tokens written t"). The bottom
panel reads one key ("key to read") with the query $q$ equal to that key, and puts the recall
$S_t^\top q$ beside the value written last under that key. The title gives the distance between
the two, the **recall error**. The page runs each rule's recurrence itself; the tests check every
number it draws, for every rule, step, $\beta$, $\alpha$ and key, against the package's
(`la.gated_delta_rule` for the delta rules, the state of `la.linear_attention` for the first).
# %% code remove-cell
from course_attention.explorers import linear as linear_explorer

# the prose names the sequence and the tokens that write a (1, 4, 7) and d (5)
assert linear_explorer.SEQUENCE == tuple("abcadbac") and linear_explorer.NAMES == tuple("abcd")
ca.glue(ex_pairs=len(linear_explorer.SEQUENCE), ex_dk=len(linear_explorer.NAMES))
# %% md
**Try it.** *Before you move anything: the explorer starts with linear attention after all
{glue:text}`ex_pairs` tokens, reading key `a`, which tokens 1, 4 and 7 wrote. What will the
memory return for `a`, and how far is that from the value token 7 wrote?* Compare the two bars
and the title. Then set "rule" to "delta rule: writes v − Sᵀk": with "write strength β (delta
rules)" at 1, what is the error now? Lower β to 0.5: is the recall still better than linear
attention's? Last, choose "gated delta rule: decays by α" with β back at 1, read key `d` (written
at token 5), and move "decay α (gated rule)" from 1 down to 0.5. What happens to `d`'s recall,
and to the recall of `c`, the key written last?
# %% code hide-input
explorer = widgets.linear_explorer(rule="linear", t=8, beta=1.0, alpha=1.0, key="a")
explorer
# %% code remove-cell
linear_explorer.check_try_it()  # the Try it's answers, computed by the package
