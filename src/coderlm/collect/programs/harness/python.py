# coderlm LeetCode harness for Python (docs/programs.md), filled in by coderlm.collect.programs.harness.
# argv: memory | time WARMUPS REPEATS. Reads cases.json, writes coderlm_out.json. Memory: the tracemalloc peak of
# each call above the traced memory at its start (the paper's dynamic peak), inputs built before it.
import bisect
import collections
import functools
import heapq
import itertools
import math
import operator
import os
import random
import re
import string
import sys
from bisect import *
from collections import *
from functools import *
from heapq import *
from itertools import *
from math import *
from operator import *
from string import *
from typing import *

sys.setrecursionlimit(100000)
sys.path.append(os.path.dirname(os.path.abspath(__file__)))  # sortedcontainers, linked in (support)
try:
    from sortedcontainers import SortedDict, SortedList, SortedSet
except ImportError:
    pass


class ListNode:
    def __init__(self, val=0, next=None):
        self.val = val
        self.next = next


class TreeNode:
    def __init__(self, val=0, left=None, right=None):
        self.val = val
        self.left = left
        self.right = right


{{SOLUTION}}


def coderlm_main():
    import gc
    import json
    import time
    import tracemalloc

    def build(kind, value):
        if kind.endswith("[]"):
            return [build(kind[:-2], v) for v in value]
        if kind == "ListNode":
            head = tail = ListNode()
            for v in value or []:
                tail.next = tail = ListNode(v)
            return head.next
        if kind == "TreeNode":
            if not value or value[0] is None:
                return None
            root = TreeNode(value[0])
            queue, i = [root], 1
            for node in queue:
                if i >= len(value):
                    break
                if value[i] is not None:
                    node.left = TreeNode(value[i])
                    queue.append(node.left)
                if i + 1 < len(value) and value[i + 1] is not None:
                    node.right = TreeNode(value[i + 1])
                    queue.append(node.right)
                i += 2
            return root
        return json.loads(json.dumps(value))

    def plain(v):
        if isinstance(v, ListNode):
            out = []
            while v is not None and len(out) < 1000000:
                out.append(v.val)
                v = v.next
            return out
        if isinstance(v, TreeNode):
            out, queue = [], [v]
            for node in queue:
                out.append(None if node is None else node.val)
                if node is not None:
                    queue += [node.left, node.right]
            while out and out[-1] is None:
                out.pop()
            return out
        if isinstance(v, (list, tuple, set, frozenset)):
            return [plain(x) for x in v]
        if isinstance(v, float) and not math.isfinite(v):
            return None
        return v

    with open("cases.json", encoding="utf-8") as f:
        cases, report_args, kinds = json.load(f)
    method = "{{METHOD}}"

    def args_of(case):
        return [build(k, v) for k, v in zip(kinds, case)]

    if sys.argv[1] == "memory":
        for _ in range(2):  # a warm-up pass, measured alike: first-use effects stay out of the labels
            results, after, peak = [], [], 0
            for case in cases:
                args = args_of(case)
                gc.collect()
                tracemalloc.start()
                start = tracemalloc.get_traced_memory()[0]
                result = getattr(Solution(), method)(*args)
                peak = max(peak, tracemalloc.get_traced_memory()[1] - start)
                tracemalloc.stop()
                results.append(plain(result))
                after.append(plain(args))
        out = {"results": results, "heap_peak_bytes": peak}
        if report_args:
            out["args"] = after
    else:
        warmups, repeats = int(sys.argv[2]), int(sys.argv[3])
        times = []
        for _ in range(warmups + repeats):
            total = 0.0
            for case in cases:
                args = args_of(case)
                call = getattr(Solution(), method)
                t0 = time.perf_counter()
                call(*args)
                total += time.perf_counter() - t0
            times.append(total)
        out = {"times": times[warmups:]}
    with open("coderlm_out.json", "w", encoding="utf-8") as f:
        json.dump(out, f)


coderlm_main()
