// coderlm LeetCode harness for JavaScript (docs/programs.md), filled in by coderlm.collect.programs.harness.
// argv: memory | time WARMUPS REPEATS. Reads cases.json, writes coderlm_out.json. Memory: V8 heap bytes allocated
// by each call: used heap after minus before, plus what garbage collections during the call freed
// (v8.GCProfiler); run with --expose-gc --predictable --single-threaded and collected before each call.

{{include node_prelude.js}}
{{SOLUTION}}

function ListNode(val, next) {
    this.val = val === undefined ? 0 : val;
    this.next = next === undefined ? null : next;
}

function TreeNode(val, left, right) {
    this.val = val === undefined ? 0 : val;
    this.left = left === undefined ? null : left;
    this.right = right === undefined ? null : right;
}

{{include node_body.js}}
