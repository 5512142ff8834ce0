// what LeetCode's JavaScript runtime provides (lodash as _, @datastructures-js queues), as globals, so that a
// solution's own class of the same name shadows them instead of clashing
for (const name of ['@datastructures-js/priority-queue', '@datastructures-js/queue', '@datastructures-js/deque']) {
    try { Object.assign(globalThis, require(name)); } catch (e) {}
}
try { globalThis._ = require('lodash'); } catch (e) {}
