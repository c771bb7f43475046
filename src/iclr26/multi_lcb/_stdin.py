"""Stdin-native problems of our own, in the shape of LiveCodeBench's AtCoder/Codeforces tasks: a statement
with Input/Output/Constraints sections, a seeded generator of test inputs, and a reference solution whose
output on each input is the expected STDOUT.

Each reference is a Python source defining ``solve(data: str) -> str``; :func:`stdin_reference_program`
wraps it into a STDIN/STDOUT program for the sandbox. Each problem also has an independent brute-force
solution (``brute``), used by the tests on small inputs to check the references and so the expected
outputs. The statements, generators and solutions are ours.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from ..validation import check_int
from ._lcb import Problem

#: Expected outputs are reference outputs; ``Problem.contest_date`` of every stdin-native problem.
STDIN_DATE = datetime(2026, 12, 5)
_RUN = "\nimport sys\nsys.stdout.write(solve(sys.stdin.read()))\n"


@dataclass(frozen=True)
class StdinSpec:
    """One problem: ``generate(rng, small)`` returns an input (``small``: sizes the brute force can
    take); ``solution`` and ``brute`` are Python sources defining ``solve(data) -> str``."""

    key: str
    title: str
    difficulty: str
    statement: str
    generate: Callable[[random.Random, bool], str]
    solution: str
    brute: str


def _ints(values) -> str:
    return " ".join(map(str, values))


def _array(rng: random.Random, small: bool, lo: int = -50, hi: int = 50, n_max: int = 200) -> str:
    n = rng.randint(1, 7 if small else n_max)
    return f"{n}\n{_ints(rng.randint(lo, hi) for _ in range(n))}\n"


def _gen_two_sum(rng, small):
    n = rng.randint(1, 7 if small else 300)
    return f"{n} {rng.randint(-10, 10)}\n{_ints(rng.randint(-5, 5) for _ in range(n))}\n"


def _gen_permutation(rng, small):
    n = rng.randint(1, 7 if small else 500)
    p = list(range(1, n + 1))
    rng.shuffle(p)
    return f"{n}\n{_ints(p)}\n"


def _gen_brackets(rng, small):
    t = rng.randint(1, 4 if small else 20)
    lines = []
    for _ in range(t):
        m = rng.randint(1, 8 if small else 60)
        if rng.random() < 0.5:  # balanced by construction
            s, stack = [], []
            for _ in range(m):
                if stack and rng.random() < 0.5:
                    s.append({"(": ")", "[": "]", "{": "}"}[stack.pop()])
                else:
                    c = rng.choice("([{")
                    stack.append(c)
                    s.append(c)
            s += [{"(": ")", "[": "]", "{": "}"}[c] for c in reversed(stack)]
            lines.append("".join(s))
        else:
            lines.append("".join(rng.choice("()[]{}") for _ in range(m)))
    return f"{t}\n" + "\n".join(lines) + "\n"


def _gen_primes(rng, small):
    t = rng.randint(1, 4 if small else 10)
    return f"{t}\n" + "\n".join(str(rng.randint(1, 60 if small else 100000)) for _ in range(t)) + "\n"


def _gen_grid(rng, small, marks=False):
    h, w = (rng.randint(1, 4), rng.randint(1, 4)) if small else (rng.randint(1, 40), rng.randint(1, 40))
    if marks and h * w < 2:
        w = 2
    rows = [["#" if rng.random() < 0.2 else "." for _ in range(w)] for _ in range(h)]
    if marks:
        cells = [(i, j) for i in range(h) for j in range(w)]
        (si, sj), (ti, tj) = rng.sample(cells, 2)
        rows[si][sj], rows[ti][tj] = "S", "T"
    else:
        rows[0][0] = rows[-1][-1] = "."
    return f"{h} {w}\n" + "\n".join("".join(r) for r in rows) + "\n"


def _gen_knapsack(rng, small):
    n = rng.randint(1, 6 if small else 60)
    cap = rng.randint(0, 30 if small else 1000)
    items = [f"{rng.randint(1, 15 if small else 100)} {rng.randint(0, 50)}" for _ in range(n)]
    return f"{n} {cap}\n" + "\n".join(items) + "\n"


def _gen_coins(rng, small):
    k = rng.randint(1, 4 if small else 10)
    coins = rng.sample(range(1, 13 if small else 60), k)
    return f"{k} {rng.randint(0, 20 if small else 5000)}\n{_ints(coins)}\n"


def _gen_two_strings(rng, small):
    a = "".join(rng.choice("abc") for _ in range(rng.randint(0, 5 if small else 150)))
    b = "".join(rng.choice("abc") for _ in range(rng.randint(0, 5 if small else 150)))
    return f"{a}\n{b}\n"


def _gen_graph(rng, small, weighted=False):
    n = rng.randint(1, 6 if small else 200)
    m = rng.randint(0, 8 if small else 400)
    edges = []
    for _ in range(m):
        u, v = rng.randint(1, n), rng.randint(1, n)
        edges.append(f"{u} {v} {rng.randint(1, 20)}" if weighted else f"{u} {v}")
    return f"{n} {m}\n" + "".join(e + "\n" for e in edges)


def _gen_palindromes(rng, small):
    return (
        "".join(rng.choice("ab" if small else "abc") for _ in range(rng.randint(1, 8 if small else 400)))
        + "\n"
    )


def _gen_matrix(rng, small):
    n = rng.randint(1, 4 if small else 30)
    return f"{n}\n" + "".join(_ints(rng.randint(0, 99) for _ in range(n)) + "\n" for _ in range(n))


def _gen_intervals(rng, small):
    n = rng.randint(1, 6 if small else 300)
    rows = []
    for _ in range(n):
        a = rng.randint(0, 30 if small else 10000)
        rows.append(f"{a} {a + rng.randint(0, 8 if small else 300)}")
    return f"{n}\n" + "\n".join(rows) + "\n"


def _gen_range_sums(rng, small):
    n, q = rng.randint(1, 6 if small else 300), rng.randint(1, 5 if small else 300)
    a = _ints(rng.randint(-100, 100) for _ in range(n))
    qs = []
    for _ in range(q):
        l_ = rng.randint(1, n)
        qs.append(f"{l_} {rng.randint(l_, n)}")
    return f"{n} {q}\n{a}\n" + "\n".join(qs) + "\n"


def _gen_words(rng, small):
    words = ["apple", "banana", "cherry", "date", "fig", "grape", "kiwi"][: 3 if small else 7]
    n = rng.randint(1, 8 if small else 300)
    return f"{n}\n" + " ".join(rng.choice(words) for _ in range(n)) + "\n"


def _gen_stats(rng, small):
    n = rng.randint(1, 6 if small else 200)
    return f"{n}\n{_ints(rng.randint(-1000, 1000) for _ in range(n))}\n"


def _gen_base(rng, small):
    t = rng.randint(1, 4 if small else 20)
    rows = [f"{rng.randint(0, 10**9)} {rng.randint(2, 16)}" for _ in range(t)]
    return f"{t}\n" + "\n".join(rows) + "\n"


SPECS: tuple[StdinSpec, ...] = (
    StdinSpec(
        "max-subarray",
        "Best Stretch",
        "easy",
        "You are given a sequence of N integers A_1, ..., A_N. Find the largest possible sum of a "
        "non-empty contiguous block A_l, A_{l+1}, ..., A_r.\n\nInput\n\nN\nA_1 A_2 ... A_N\n\nOutput\n\n"
        "Print the largest sum.\n\nConstraints\n\n1 <= N <= 200\n-50 <= A_i <= 50",
        _array,
        "def solve(data):\n    a = list(map(int, data.split()))[1:]\n    best = cur = a[0]\n"
        "    for x in a[1:]:\n        cur = max(x, cur + x)\n        best = max(best, cur)\n"
        "    return f'{best}\\n'\n",
        "def solve(data):\n    a = list(map(int, data.split()))[1:]\n"
        "    return f'{max(sum(a[i:j]) for i in range(len(a)) for j in range(i + 1, len(a) + 1))}\\n'\n",
    ),
    StdinSpec(
        "inversions",
        "Out of Order",
        "medium",
        "You are given a permutation P of 1, ..., N. Count the pairs (i, j) with i < j and P_i > P_j.\n\n"
        "Input\n\nN\nP_1 P_2 ... P_N\n\nOutput\n\nPrint the number of such pairs.\n\nConstraints\n\n"
        "1 <= N <= 500",
        _gen_permutation,
        "def solve(data):\n    p = list(map(int, data.split()))[1:]\n    n = len(p)\n"
        "    tree = [0] * (n + 1)\n"
        "    count = 0\n    for k, x in enumerate(p):\n        i, seen = x, 0\n        while i > 0:\n"
        "            seen += tree[i]\n            i -= i & -i\n        count += k - seen\n        i = x\n"
        "        while i <= n:\n            tree[i] += 1\n            i += i & -i\n"
        "    return f'{count}\\n'\n",
        "def solve(data):\n    p = list(map(int, data.split()))[1:]\n"
        "    return f'{sum(p[i] > p[j] for i in range(len(p)) for j in range(i + 1, len(p)))}\\n'\n",
    ),
    StdinSpec(
        "pair-sum",
        "Pairs Adding Up",
        "easy",
        "Given N integers A_1, ..., A_N and an integer K, count the pairs (i, j) with i < j and "
        "A_i + A_j = K.\n\nInput\n\nN K\nA_1 A_2 ... A_N\n\nOutput\n\nPrint the count.\n\nConstraints\n\n"
        "1 <= N <= 300\n-10 <= K <= 10\n-5 <= A_i <= 5",
        _gen_two_sum,
        "def solve(data):\n    n, k, *a = map(int, data.split())\n    seen, count = {}, 0\n    for x in a:\n"
        "        count += seen.get(k - x, 0)\n        seen[x] = seen.get(x, 0) + 1\n"
        "    return f'{count}\\n'\n",
        "def solve(data):\n    n, k, *a = map(int, data.split())\n"
        "    return f'{sum(a[i] + a[j] == k for i in range(n) for j in range(i + 1, n))}\\n'\n",
    ),
    StdinSpec(
        "lis",
        "Rising Subsequence",
        "medium",
        "Given N integers, print the length of their longest strictly increasing subsequence.\n\nInput\n\n"
        "N\nA_1 A_2 ... A_N\n\nOutput\n\nPrint the length.\n\nConstraints\n\n1 <= N <= 200\n"
        "-50 <= A_i <= 50",
        _array,
        "import bisect\n\ndef solve(data):\n    a = list(map(int, data.split()))[1:]\n    tails = []\n"
        "    for x in a:\n        i = bisect.bisect_left(tails, x)\n        tails[i:i + 1] = [x]\n"
        "    return f'{len(tails)}\\n'\n",
        "from itertools import combinations\n\ndef solve(data):\n    a = list(map(int, data.split()))[1:]\n"
        "    for r in range(len(a), 0, -1):\n        for c in combinations(a, r):\n"
        "            if all(x < y for x, y in zip(c, c[1:])):\n                return f'{r}\\n'\n",
    ),
    StdinSpec(
        "brackets",
        "Matching Brackets",
        "easy",
        "For each of T strings made of the characters ()[]{}, print YES if its brackets are balanced and "
        "properly nested, and NO otherwise.\n\nInput\n\nT\nS_1\n...\nS_T\n\nOutput\n\nT lines, each YES or "
        "NO.\n\nConstraints\n\n1 <= T <= 20\n1 <= |S_i| <= 120",
        _gen_brackets,
        "def solve(data):\n    lines = data.split()\n    out = []\n    for s in lines[1:]:\n"
        "        stack = []\n"
        "        ok = True\n        for c in s:\n            if c in '([{':\n"
        "                stack.append(c)\n"
        "            elif not stack or stack.pop() + c not in ('()', '[]', '{}'):\n"
        "                ok = False\n"
        "                break\n        out.append('YES' if ok and not stack else 'NO')\n"
        "    return '\\n'.join(out) + '\\n'\n",
        "def solve(data):\n    out = []\n    for s in data.split()[1:]:\n        prev = None\n"
        "        while prev != s:\n            prev = s\n"
        "            s = s.replace('()', '').replace('[]', '').replace('{}', '')\n"
        "        out.append('NO' if s else 'YES')\n    return '\\n'.join(out) + '\\n'\n",
    ),
    StdinSpec(
        "prime-count",
        "Counting Primes",
        "easy",
        "Answer T questions: for each given N, how many prime numbers are at most N?\n\nInput\n\nT\n"
        "N_1\n...\n"
        "N_T\n\nOutput\n\nT lines, the answers.\n\nConstraints\n\n1 <= T <= 10\n1 <= N_i <= 100000",
        _gen_primes,
        "def solve(data):\n    t, *qs = map(int, data.split())\n    top = max(qs)\n"
        "    sieve = bytearray([1]) * (top + 1)\n"
        "    sieve[:2] = b'\\x00\\x00'[: top + 1]\n    for p in range(2, int(top ** 0.5) + 1):\n"
        "        if sieve[p]:\n            sieve[p * p :: p] = bytearray(len(range(p * p, top + 1, p)))\n"
        "    prefix, c = [], 0\n    for v in sieve:\n        c += v\n        prefix.append(c)\n"
        "    return ''.join(f'{prefix[q]}\\n' for q in qs)\n",
        "def solve(data):\n    t, *qs = map(int, data.split())\n"
        "    prime = lambda k: k > 1 and all(k % d for d in range(2, k))\n"
        "    return ''.join(f'{sum(prime(k) for k in range(q + 1))}\\n' for q in qs)\n",
    ),
    StdinSpec(
        "grid-paths",
        "Down and Right",
        "medium",
        "A grid has H rows and W columns; '#' cells are blocked, '.' cells are free. Count the paths from "
        "the top-left cell to the bottom-right cell that move only down or right through free cells, "
        "modulo 1000000007.\n\nInput\n\nH W\nH lines of W characters\n\nOutput\n\nPrint the count.\n\n"
        "Constraints\n\n1 <= H, W <= 40\nThe two corner cells are free.",
        _gen_grid,
        "def solve(data):\n    lines = data.split()\n    h, w = int(lines[0]), int(lines[1])\n"
        "    g = lines[2:]\n"
        "    ways = [0] * w\n    ways[0] = 1\n    for i in range(h):\n        for j in range(w):\n"
        "            if g[i][j] == '#':\n                ways[j] = 0\n            elif j:\n"
        "                ways[j] = (ways[j] + ways[j - 1]) % 1000000007\n    return f'{ways[-1]}\\n'\n",
        "def solve(data):\n    lines = data.split()\n    h, w = int(lines[0]), int(lines[1])\n"
        "    g = lines[2:]\n"
        "    def walk(i, j):\n        if i >= h or j >= w or g[i][j] == '#':\n            return 0\n"
        "        if (i, j) == (h - 1, w - 1):\n            return 1\n"
        "        return walk(i + 1, j) + walk(i, j + 1)\n"
        "    return f'{walk(0, 0) % 1000000007}\\n'\n",
    ),
    StdinSpec(
        "grid-bfs",
        "Shortest Walk",
        "medium",
        "A grid has H rows and W columns of '.', '#' (wall), one 'S' and one 'T'. In one step you move to "
        "an adjacent non-wall cell (up, down, left or right). Print the fewest steps from S to T, or -1 if "
        "T cannot be reached.\n\nInput\n\nH W\nH lines of W characters\n\nOutput\n\nPrint the answer.\n\n"
        "Constraints\n\n1 <= H, W <= 40, H * W >= 2",
        lambda rng, small: _gen_grid(rng, small, marks=True),
        "from collections import deque\n\ndef solve(data):\n    lines = data.split()\n"
        "    h, w = int(lines[0]), int(lines[1])\n"
        "    g = lines[2:]\n    cells = [(i, j) for i in range(h) for j in range(w)]\n"
        "    s = next(c for c in cells if g[c[0]][c[1]] == 'S')\n    dist = {s: 0}\n    queue = deque([s])\n"
        "    while queue:\n        i, j = queue.popleft()\n        if g[i][j] == 'T':\n"
        "            return f'{dist[i, j]}\\n'\n"
        "        for a, b in ((i + 1, j), (i - 1, j), (i, j + 1), (i, j - 1)):\n"
        "            if 0 <= a < h and 0 <= b < w and g[a][b] != '#' and (a, b) not in dist:\n"
        "                dist[a, b] = dist[i, j] + 1\n                queue.append((a, b))\n"
        "    return '-1\\n'\n",
        "def solve(data):\n    lines = data.split()\n    h, w = int(lines[0]), int(lines[1])\n"
        "    g = lines[2:]\n"
        "    inf = float('inf')\n"
        "    d = {(i, j): (0 if g[i][j] == 'S' else inf) for i in range(h) for j in range(w)}\n"
        "    for _ in range(h * w):\n        for (i, j) in d:\n            if g[i][j] == '#':\n"
        "                continue\n"
        "            for a, b in ((i + 1, j), (i - 1, j), (i, j + 1), (i, j - 1)):\n"
        "                if (a, b) in d and g[a][b] != '#':\n"
        "                    d[a, b] = min(d[a, b], d[i, j] + 1)\n"
        "    t = next(d[c] for c in d if g[c[0]][c[1]] == 'T')\n"
        "    return f'{t if t < inf else -1}\\n'\n",
    ),
    StdinSpec(
        "knapsack",
        "Packing the Bag",
        "medium",
        "There are N items; item i has weight W_i and value V_i. Choose items of total weight at most C to "
        "maximise the total value. Print the largest total value.\n\nInput\n\nN C\nW_1 V_1\n...\nW_N V_N\n\n"
        "Output\n\nPrint the answer.\n\nConstraints\n\n1 <= N <= 60\n0 <= C <= 1000\n1 <= W_i <= 100\n"
        "0 <= V_i <= 50",
        _gen_knapsack,
        "def solve(data):\n    n, cap, *rest = map(int, data.split())\n    best = [0] * (cap + 1)\n"
        "    for k in range(n):\n        w, v = rest[2 * k], rest[2 * k + 1]\n"
        "        for c in range(cap, w - 1, -1):\n            best[c] = max(best[c], best[c - w] + v)\n"
        "    return f'{best[cap]}\\n'\n",
        "def solve(data):\n    n, cap, *rest = map(int, data.split())\n    top = 0\n"
        "    for mask in range(1 << n):\n"
        "        ks = [k for k in range(n) if mask >> k & 1]\n"
        "        if sum(rest[2 * k] for k in ks) <= cap:\n"
        "            top = max(top, sum(rest[2 * k + 1] for k in ks))\n    return f'{top}\\n'\n",
    ),
    StdinSpec(
        "coin-ways",
        "Making Change",
        "medium",
        "Coins come in K distinct denominations D_1, ..., D_K, with unlimited supply. In how many ways can "
        "the amount A be paid (the order of coins does not matter)? Print the count modulo 1000000007.\n\n"
        "Input\n\nK A\nD_1 D_2 ... D_K\n\nOutput\n\nPrint the count.\n\nConstraints\n\n1 <= K <= 10\n"
        "0 <= A <= 5000\n1 <= D_i <= 60",
        _gen_coins,
        "def solve(data):\n    k, amount, *coins = map(int, data.split())\n    ways = [1] + [0] * amount\n"
        "    for c in coins:\n        for x in range(c, amount + 1):\n"
        "            ways[x] = (ways[x] + ways[x - c]) % 1000000007\n"
        "    return f'{ways[amount]}\\n'\n",
        "def solve(data):\n    k, amount, *coins = map(int, data.split())\n    def count(i, left):\n"
        "        if left == 0:\n            return 1\n        if i == len(coins):\n            return 0\n"
        "        return sum(count(i + 1, left - u * coins[i]) for u in range(left // coins[i] + 1))\n"
        "    return f'{count(0, amount) % 1000000007}\\n'\n",
    ),
    StdinSpec(
        "edit-distance",
        "Fewest Edits",
        "medium",
        "Given strings S and T (lowercase letters; either may be empty, then its line is empty), print the "
        "least number of single-character insertions, deletions and replacements that turn S into T.\n\n"
        "Input\n\nS\nT\n\nOutput\n\nPrint the number.\n\nConstraints\n\n0 <= |S|, |T| <= 150",
        _gen_two_strings,
        "def solve(data):\n    parts = data.split('\\n')\n    s, t = parts[0].strip(), parts[1].strip()\n"
        "    row = list(range(len(t) + 1))\n    for i, a in enumerate(s, 1):\n"
        "        prev, row[0] = row[0], i\n"
        "        for j, b in enumerate(t, 1):\n"
        "            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (a != b))\n"
        "    return f'{row[-1]}\\n'\n",
        "from functools import lru_cache\n\ndef solve(data):\n    parts = data.split('\\n')\n"
        "    s, t = parts[0].strip(), parts[1].strip()\n    @lru_cache(None)\n    def d(i, j):\n"
        "        if i == len(s) or j == len(t):\n            return len(s) - i + len(t) - j\n"
        "        return min(d(i + 1, j) + 1, d(i, j + 1) + 1, d(i + 1, j + 1) + (s[i] != t[j]))\n"
        "    return f'{d(0, 0)}\\n'\n",
    ),
    StdinSpec(
        "components",
        "Islands of Friends",
        "easy",
        "A graph has N vertices 1..N and M undirected edges (self-loops and repeated edges may occur). "
        "Print the number of connected components.\n\nInput\n\nN M\nU_1 V_1\n...\nU_M V_M\n\nOutput\n\n"
        "Print the number.\n\nConstraints\n\n1 <= N <= 200\n0 <= M <= 400",
        _gen_graph,
        "def solve(data):\n    n, m, *e = map(int, data.split())\n    parent = list(range(n + 1))\n"
        "    def find(x):\n        while parent[x] != x:\n            parent[x] = parent[parent[x]]\n"
        "            x = parent[x]\n"
        "        return x\n    comps = n\n    for k in range(m):\n"
        "        a, b = find(e[2 * k]), find(e[2 * k + 1])\n"
        "        if a != b:\n            parent[a] = b\n            comps -= 1\n    return f'{comps}\\n'\n",
        "def solve(data):\n    n, m, *e = map(int, data.split())\n    label = list(range(n + 1))\n"
        "    for _ in range(n):\n        for k in range(m):\n            a, b = e[2 * k], e[2 * k + 1]\n"
        "            label[a] = label[b] = min(label[a], label[b])\n    return f'{len(set(label[1:]))}\\n'\n",
    ),
    StdinSpec(
        "dijkstra",
        "Cheapest Route",
        "medium",
        "A graph has N vertices and M undirected edges with positive lengths. Print the length of a "
        "shortest path from vertex 1 to vertex N, or -1 if there is none.\n\nInput\n\nN M\nU_1 V_1 L_1\n...\n"
        "U_M V_M L_M\n\nOutput\n\nPrint the answer.\n\nConstraints\n\n1 <= N <= 200\n0 <= M <= 400\n"
        "1 <= L_i <= 20",
        lambda rng, small: _gen_graph(rng, small, weighted=True),
        "import heapq\n\ndef solve(data):\n    n, m, *e = map(int, data.split())\n"
        "    adj = [[] for _ in range(n + 1)]\n"
        "    for k in range(m):\n        u, v, w = e[3 * k : 3 * k + 3]\n        adj[u].append((v, w))\n"
        "        adj[v].append((u, w))\n"
        "    dist = {1: 0}\n    heap = [(0, 1)]\n    while heap:\n        d, u = heapq.heappop(heap)\n"
        "        if d > dist[u]:\n            continue\n        for v, w in adj[u]:\n"
        "            if d + w < dist.get(v, float('inf')):\n                dist[v] = d + w\n"
        "                heapq.heappush(heap, (d + w, v))\n"
        "    return f'{dist.get(n, -1)}\\n'\n",
        "def solve(data):\n    n, m, *e = map(int, data.split())\n    inf = float('inf')\n"
        "    d = [inf] * (n + 1)\n    d[1] = 0\n"
        "    for _ in range(n):\n        for k in range(m):\n            u, v, w = e[3 * k : 3 * k + 3]\n"
        "            d[u], d[v] = min(d[u], d[v] + w), min(d[v], d[u] + w)\n"
        "    return f'{d[n] if d[n] < inf else -1}\\n'\n",
    ),
    StdinSpec(
        "palindromes",
        "Mirror Pieces",
        "medium",
        "Given a string S, count its palindromic substrings: pairs (l, r) with l <= r such that "
        "S_l..S_r reads "
        "the same backwards (equal substrings at different positions count separately).\n\nInput\n\nS\n\n"
        "Output\n\nPrint the count.\n\nConstraints\n\n1 <= |S| <= 400",
        _gen_palindromes,
        "def solve(data):\n    s = data.strip()\n    n, count = len(s), 0\n"
        "    for center in range(2 * n - 1):\n"
        "        l, r = center // 2, center // 2 + center % 2\n"
        "        while l >= 0 and r < n and s[l] == s[r]:\n"
        "            count += 1\n            l -= 1\n            r += 1\n    return f'{count}\\n'\n",
        "def solve(data):\n    s = data.strip()\n"
        "    return f'{sum(s[i:j] == s[i:j][::-1] for i in range(len(s)) for j in range(i + 1, len(s) + "
        "1))}\\n'\n",
    ),
    StdinSpec(
        "rotate",
        "Quarter Turn",
        "easy",
        "Rotate an N x N matrix of integers 90 degrees clockwise and print it.\n\nInput\n\nN\nN lines of N "
        "integers\n\nOutput\n\nN lines of N integers separated by spaces.\n\nConstraints\n\n1 <= N <= 30\n"
        "0 <= entries <= 99",
        _gen_matrix,
        "def solve(data):\n    v = data.split()\n    n = int(v[0])\n"
        "    m = [v[1 + i * n : 1 + (i + 1) * n] for i in range(n)]\n"
        "    return ''.join(' '.join(row) + '\\n' for row in zip(*m[::-1]))\n",
        "def solve(data):\n    v = data.split()\n    n = int(v[0])\n    out = []\n    for i in range(n):\n"
        "        out.append(' '.join(v[1 + (n - 1 - j) * n + i] for j in range(n)))\n"
        "    return '\\n'.join(out) + '\\n'\n",
    ),
    StdinSpec(
        "intervals",
        "Covered Ground",
        "easy",
        "N closed intervals [A_i, B_i] of integers are given. Merge the ones that overlap or touch (share "
        "an endpoint); print the number of merged intervals and the total length (sum of B - A over "
        "them).\n\nInput\n\nN\nA_1 B_1\n...\nA_N B_N\n\nOutput\n\nTwo integers separated by a space.\n\n"
        "Constraints\n\n1 <= N <= 300\n0 <= A_i <= B_i <= 10300",
        _gen_intervals,
        "def solve(data):\n    n, *v = map(int, data.split())\n    iv = sorted(zip(v[::2], v[1::2]))\n"
        "    merged = [list(iv[0])]\n"
        "    for a, b in iv[1:]:\n        if a <= merged[-1][1]:\n"
        "            merged[-1][1] = max(merged[-1][1], b)\n"
        "        else:\n            merged.append([a, b])\n"
        "    return f'{len(merged)} {sum(b - a for a, b in merged)}\\n'\n",
        "def solve(data):\n    n, *v = map(int, data.split())\n"
        "    groups = [[a, b] for a, b in zip(v[::2], v[1::2])]\n"
        "    changed = True\n    while changed:\n        changed = False\n"
        "        for i in range(len(groups)):\n"
        "            for j in range(i + 1, len(groups)):\n"
        "                (a, b), (c, d) = groups[i], groups[j]\n"
        "                if a <= d and c <= b:\n                    groups[i] = [min(a, c), max(b, d)]\n"
        "                    del groups[j]\n                    changed = True\n                    break\n"
        "            if changed:\n                break\n"
        "    return f'{len(groups)} {sum(b - a for a, b in groups)}\\n'\n",
    ),
    StdinSpec(
        "range-sums",
        "Window Totals",
        "easy",
        "Given N integers and Q queries (L, R), print A_L + ... + A_R for each query.\n\nInput\n\nN Q\n"
        "A_1 ... A_N\nL_1 R_1\n...\nL_Q R_Q\n\nOutput\n\nQ lines.\n\nConstraints\n\n1 <= N, Q <= 300\n"
        "-100 <= A_i <= 100\n1 <= L_i <= R_i <= N",
        _gen_range_sums,
        "def solve(data):\n    v = list(map(int, data.split()))\n    n, q = v[0], v[1]\n    pre = [0]\n"
        "    for x in v[2 : 2 + n]:\n        pre.append(pre[-1] + x)\n    qs = v[2 + n :]\n"
        "    return ''.join(f'{pre[qs[2 * k + 1]] - pre[qs[2 * k] - 1]}\\n' for k in range(q))\n",
        "def solve(data):\n    v = list(map(int, data.split()))\n    n, q = v[0], v[1]\n"
        "    a, qs = v[2 : 2 + n], v[2 + n :]\n"
        "    return ''.join(f'{sum(a[qs[2 * k] - 1 : qs[2 * k + 1]])}\\n' for k in range(q))\n",
    ),
    StdinSpec(
        "word-count",
        "Most Frequent Word",
        "easy",
        "N words are given. Print each distinct word with its number of occurrences, one per line, most "
        "frequent first; words with equal counts in alphabetical order.\n\nInput\n\nN\nW_1 ... W_N\n\n"
        "Output\n\nLines 'word count'.\n\nConstraints\n\n1 <= N <= 300",
        _gen_words,
        "from collections import Counter\n\ndef solve(data):\n    words = data.split()[1:]\n"
        "    ranked = sorted(Counter(words).items(), key=lambda kv: (-kv[1], kv[0]))\n"
        "    return ''.join(f'{w} {c}\\n' for w, c in ranked)\n",
        "def solve(data):\n    words = data.split()[1:]\n    distinct = sorted(set(words))\n"
        "    ranked = sorted(distinct, key=lambda w: -words.count(w))\n"
        "    return ''.join(f'{w} {words.count(w)}\\n' for w in ranked)\n",
    ),
    StdinSpec(
        "mean-std",
        "Average and Spread",
        "easy",
        "Print the mean and the population standard deviation of N integers, each rounded to 6 digits after "
        "the decimal point, separated by a space.\n\nInput\n\nN\nA_1 ... A_N\n\nOutput\n\nTwo numbers.\n\n"
        "Constraints\n\n1 <= N <= 200\n-1000 <= A_i <= 1000",
        _gen_stats,
        "from fractions import Fraction\n\ndef solve(data):\n    n, *a = map(int, data.split())\n"
        "    mean = Fraction(sum(a), n)\n    var = sum((x - mean) ** 2 for x in a) / n\n"
        "    return f'{float(mean):.6f} {float(var) ** 0.5:.6f}\\n'\n",
        "import statistics\n\ndef solve(data):\n    n, *a = map(int, data.split())\n"
        "    return f'{statistics.fmean(a):.6f} {statistics.pstdev(a):.6f}\\n'\n",
    ),
    StdinSpec(
        "base-convert",
        "Other Bases",
        "easy",
        "Answer T questions: write the non-negative integer X in base B (2 <= B <= 16), with digits "
        "0-9 and lowercase a-f.\n\nInput\n\nT\nX_1 B_1\n...\nX_T B_T\n\nOutput\n\nT lines.\n\nConstraints\n\n"
        "1 <= T <= 20\n0 <= X_i <= 10^9",
        _gen_base,
        "def solve(data):\n    v = list(map(int, data.split()))\n    out = []\n    for k in range(v[0]):\n"
        "        x, b = v[1 + 2 * k], v[2 + 2 * k]\n        digits = ''\n        while True:\n"
        "            digits = '0123456789abcdef'[x % b] + digits\n            x //= b\n"
        "            if x == 0:\n"
        "                break\n        out.append(digits)\n    return '\\n'.join(out) + '\\n'\n",
        "def solve(data):\n    v = list(map(int, data.split()))\n    out = []\n    for k in range(v[0]):\n"
        "        x, b = v[1 + 2 * k], v[2 + 2 * k]\n        width = 1\n        while b ** width <= x:\n"
        "            width += 1\n"
        "        out.append(''.join('0123456789abcdef'[x // b ** p % b] for p in range(width - 1, -1, -1)))\n"
        "    return '\\n'.join(out) + '\\n'\n",
    ),
)


def _solver(source: str) -> Callable[[str], str]:
    namespace: dict = {}
    exec(compile(source, "<stdin-native reference>", "exec"), namespace)  # our own sources only
    return namespace["solve"]


def stdin_reference_program(spec: StdinSpec) -> str:
    """The problem's reference solution as a STDIN/STDOUT Python program."""
    return spec.solution + _RUN


def stdin_problems(n_tests: int = 10, seed: int = 0, n_public: int = 2) -> list[Problem]:
    """The stdin-native problems as :class:`Problem` (platform ``"iclr26"``): ``n_tests`` generated
    inputs each (the first ``n_public`` small, as LCB's public examples), expected outputs from the
    reference solutions; a function of ``(n_tests, seed, n_public)``. ``n_tests >= 1`` and
    ``0 <= n_public <= n_tests``, else ``ValueError``."""
    n_tests = check_int(n_tests, "n_tests", minimum=1)
    n_public = check_int(n_public, "n_public", minimum=0, maximum=n_tests)
    seed = check_int(seed, "seed")
    out = []
    for k, spec in enumerate(SPECS):
        rng = random.Random(f"{seed}:{spec.key}")
        solve = _solver(spec.solution)
        inputs = [spec.generate(rng, i < n_public) for i in range(n_tests)]
        outputs = [solve(x) for x in inputs]
        examples = "".join(
            f"\n\nSample Input {i + 1}\n\n{x}\nSample Output {i + 1}\n\n{y}"
            for i, (x, y) in enumerate(zip(inputs[:n_public], outputs))
        )
        out.append(
            Problem(
                question_id=f"stdin/{spec.key}",
                question_title=spec.title,
                question_content=spec.statement + examples,
                platform="iclr26",
                difficulty=spec.difficulty,
                contest_date=STDIN_DATE,
                tests=tuple(zip(inputs, outputs)),
                testtype="stdin",
                n_public=n_public,
                meta={"reference": stdin_reference_program(spec), "index": k},
            )
        )
    return out
