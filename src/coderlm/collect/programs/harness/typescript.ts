// coderlm LeetCode harness for TypeScript (docs/programs.md), filled in by coderlm.collect.programs.harness.
// Compiled to JavaScript without a type check (esbuild), then run as the JavaScript harness is: see node_body.js.
declare const require: any, process: any, global: any;

class ListNode {
    val: number;
    next: ListNode | null;
    constructor(val?: number, next?: ListNode | null) {
        this.val = val === undefined ? 0 : val;
        this.next = next === undefined ? null : next;
    }
}

class TreeNode {
    val: number;
    left: TreeNode | null;
    right: TreeNode | null;
    constructor(val?: number, left?: TreeNode | null, right?: TreeNode | null) {
        this.val = val === undefined ? 0 : val;
        this.left = left === undefined ? null : left;
        this.right = right === undefined ? null : right;
    }
}

{{include node_prelude.js}}
{{SOLUTION}}

{{include node_body.js}}
