// coderlm: the part of the JavaScript and TypeScript harnesses after the solution (shared text).
const coderlmFs = require('fs');
const coderlmV8 = require('v8');

function coderlmBuild(kind, value) {
    if (kind.endsWith('[]')) return value.map((v) => coderlmBuild(kind.slice(0, -2), v));
    if (kind === 'ListNode') {
        const head = new ListNode(0);
        let tail = head;
        for (const v of value || []) tail = tail.next = new ListNode(v);
        return head.next;
    }
    if (kind === 'TreeNode') {
        if (!value || value.length === 0 || value[0] === null) return null;
        const root = new TreeNode(value[0]);
        const queue = [root];
        let i = 1;
        for (let q = 0; q < queue.length && i < value.length; q++) {
            const n = queue[q];
            if (i < value.length && value[i] !== null) queue.push((n.left = new TreeNode(value[i])));
            i++;
            if (i < value.length && value[i] !== null) queue.push((n.right = new TreeNode(value[i])));
            i++;
        }
        return root;
    }
    return JSON.parse(JSON.stringify(value));
}

function coderlmPlain(v) {
    if (v === undefined || v === null) return null;
    if (v instanceof ListNode) {
        const out = [];
        for (let p = v; p && out.length < 1000000; p = p.next) out.push(p.val);
        return out;
    }
    if (v instanceof TreeNode) {
        const out = [];
        const queue = [v];
        for (let q = 0; q < queue.length; q++) {
            const n = queue[q];
            if (!n) { out.push(null); continue; }
            out.push(n.val);
            queue.push(n.left, n.right);
        }
        while (out.length && out[out.length - 1] === null) out.pop();
        return out;
    }
    if (typeof v === 'bigint') return Number(v);
    if (Array.isArray(v) || ArrayBuffer.isView(v)) return Array.from(v, coderlmPlain);
    if (v instanceof Set) return Array.from(v, coderlmPlain);
    if (typeof v === 'number' && !Number.isFinite(v)) return null;
    return v;
}

function coderlmMain() {
    const fn = {{METHOD}};
    const [cases, reportArgs, kinds] = JSON.parse(coderlmFs.readFileSync('cases.json', 'utf8'));
    const build = (c) => c.map((v, i) => coderlmBuild(kinds[i], v));
    const mode = process.argv[2];
    let out;
    if (mode === 'memory') {
        // bytes a call allocates on the V8 heap: used heap after minus before, plus what collections freed
        const measure = (call) => {
            global.gc();
            const profiler = new coderlmV8.GCProfiler();
            const before = coderlmV8.getHeapStatistics().used_heap_size;
            profiler.start();
            const result = call();
            const after = coderlmV8.getHeapStatistics().used_heap_size;
            let bytes = after - before;
            for (const g of profiler.stop().statistics)
                bytes += g.beforeGC.heapStatistics.usedHeapSize - g.afterGC.heapStatistics.usedHeapSize;
            return [result, bytes];
        };
        const nothing = () => undefined;
        for (let pass = 0; pass < 2; pass++) for (const c of cases) { const a = build(c); measure(() => fn(...a)); measure(nothing); }
        const overhead = measure(nothing)[1]; // what measuring itself allocates, taken off every call
        const results = [], args = [];
        let bytes = 0;
        for (const c of cases) {
            const a = build(c);
            const [result, used] = measure(() => fn(...a));
            bytes += used - overhead;
            results.push(coderlmPlain(result));
            args.push(a.map(coderlmPlain));
        }
        out = { results, alloc_bytes: bytes };
        if (reportArgs) out.args = args;
    } else {
        const warmups = Number(process.argv[3]), repeats = Number(process.argv[4]);
        const times = [];
        for (let r = 0; r < warmups + repeats; r++) {
            let total = 0n;
            for (const c of cases) {
                const a = build(c);
                const t0 = process.hrtime.bigint();
                fn(...a);
                total += process.hrtime.bigint() - t0;
            }
            if (r >= warmups) times.push(Number(total) / 1e9);
        }
        out = { times };
    }
    coderlmFs.writeFileSync('coderlm_out.json', JSON.stringify(out) + '\n');
}

coderlmMain();
