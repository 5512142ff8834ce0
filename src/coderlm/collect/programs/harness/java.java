// coderlm LeetCode harness for Java (docs/programs.md), filled in by coderlm.collect.programs.harness.
// argv: memory | time WARMUPS REPEATS. Reads cases.json, writes coderlm_out.json. Memory: bytes allocated by
// the calling thread (com.sun.management.ThreadMXBean.getCurrentThreadAllocatedBytes) around each call.
import java.util.*;
import java.util.function.*;
import java.util.stream.*;
import java.math.*;
import java.lang.reflect.*;
import java.nio.file.*;

{{SOLUTION}}

class ListNode {
    int val;
    ListNode next;
    ListNode() {}
    ListNode(int val) { this.val = val; }
    ListNode(int val, ListNode next) { this.val = val; this.next = next; }
}

class TreeNode {
    int val;
    TreeNode left;
    TreeNode right;
    TreeNode() {}
    TreeNode(int val) { this.val = val; }
    TreeNode(int val, TreeNode left, TreeNode right) { this.val = val; this.left = left; this.right = right; }
}

class Main {
    static String text;
    static int at;

    static Object parse() {  // JSON: List, String, Boolean, null, or the number's text as BigDecimal
        while (Character.isWhitespace(text.charAt(at))) at++;
        char c = text.charAt(at);
        if (c == '[') {
            List<Object> out = new ArrayList<>();
            at++;
            while (Character.isWhitespace(text.charAt(at))) at++;
            if (text.charAt(at) == ']') { at++; return out; }
            while (true) {
                out.add(parse());
                while (Character.isWhitespace(text.charAt(at))) at++;
                if (text.charAt(at++) == ']') return out;
            }
        }
        if (c == '"') {
            StringBuilder s = new StringBuilder();
            at++;
            while (text.charAt(at) != '"') {
                char ch = text.charAt(at++);
                if (ch == '\\') {
                    char e = text.charAt(at++);
                    if (e == 'u') { s.append((char) Integer.parseInt(text.substring(at, at + 4), 16)); at += 4; }
                    else s.append(e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e == 'b' ? '\b' : e == 'f' ? '\f' : e);
                } else s.append(ch);
            }
            at++;
            return s.toString();
        }
        if (c == 't') { at += 4; return Boolean.TRUE; }
        if (c == 'f') { at += 5; return Boolean.FALSE; }
        if (c == 'n') { at += 4; return null; }
        int start = at;
        while (at < text.length() && "+-.eE0123456789".indexOf(text.charAt(at)) >= 0) at++;
        return new BigDecimal(text.substring(start, at));
    }

    static Object convert(Object v, Type type) {
        if (type instanceof ParameterizedType) {
            Type[] inner = ((ParameterizedType) type).getActualTypeArguments();
            List<Object> out = new ArrayList<>();
            for (Object e : (List<?>) v) out.add(convert(e, inner[0]));
            return out;
        }
        Class<?> k = (Class<?>) type;
        if (k == int.class || k == Integer.class) return number(v).intValue();
        if (k == long.class || k == Long.class) return number(v).longValue();
        if (k == double.class || k == Double.class) return number(v).doubleValue();
        if (k == float.class || k == Float.class) return number(v).floatValue();
        if (k == short.class || k == Short.class) return number(v).shortValue();
        if (k == byte.class || k == Byte.class) return number(v).byteValue();
        if (k == boolean.class || k == Boolean.class) return v instanceof Boolean ? v : number(v).intValue() != 0;
        if (k == char.class || k == Character.class) return v instanceof String ? ((String) v).charAt(0) : (char) number(v).intValue();
        if (k == String.class) return v;
        if (k == ListNode.class) {
            ListNode head = new ListNode(), tail = head;
            for (Object e : (List<?>) v) { tail.next = new ListNode(number(e).intValue()); tail = tail.next; }
            return head.next;
        }
        if (k == TreeNode.class) return tree((List<?>) v);
        if (k.isArray()) {
            List<?> items = v instanceof String ? chars((String) v) : (List<?>) v;
            Object out = Array.newInstance(k.getComponentType(), items.size());
            for (int i = 0; i < items.size(); i++) Array.set(out, i, convert(items.get(i), k.getComponentType()));
            return out;
        }
        if (v instanceof List) return new ArrayList<>((List<?>) v);
        throw new IllegalArgumentException("coderlm: cannot convert to " + type);
    }

    static List<Object> chars(String s) {
        List<Object> out = new ArrayList<>();
        for (char c : s.toCharArray()) out.add(String.valueOf(c));
        return out;
    }

    static BigDecimal number(Object v) {
        if (v instanceof Boolean) return ((Boolean) v) ? BigDecimal.ONE : BigDecimal.ZERO;
        if (v instanceof String) return BigDecimal.valueOf(((String) v).charAt(0));
        return (BigDecimal) v;
    }

    static TreeNode tree(List<?> v) {
        if (v == null || v.isEmpty() || v.get(0) == null) return null;
        TreeNode root = new TreeNode(number(v.get(0)).intValue());
        Deque<TreeNode> queue = new ArrayDeque<>(List.of(root));
        int i = 1;
        while (!queue.isEmpty() && i < v.size()) {
            TreeNode n = queue.poll();
            if (i < v.size() && v.get(i) != null) { n.left = new TreeNode(number(v.get(i)).intValue()); queue.add(n.left); }
            i++;
            if (i < v.size() && v.get(i) != null) { n.right = new TreeNode(number(v.get(i)).intValue()); queue.add(n.right); }
            i++;
        }
        return root;
    }

    static void json(Object v, StringBuilder o) {
        if (v == null) o.append("null");
        else if (v instanceof Double || v instanceof Float) {
            double d = ((Number) v).doubleValue();
            o.append(Double.isFinite(d) ? Double.toString(d) : "null");
        } else if (v instanceof Number || v instanceof Boolean) o.append(v);
        else if (v instanceof Character || v instanceof String) {
            o.append('"');
            for (char c : v.toString().toCharArray()) {
                if (c == '"' || c == '\\') o.append('\\').append(c);
                else if (c < 0x20) o.append(String.format("\\u%04x", (int) c));
                else o.append(c);
            }
            o.append('"');
        } else if (v instanceof ListNode) {
            o.append('[');
            int k = 0;
            for (ListNode p = (ListNode) v; p != null && k < 1000000; p = p.next, k++) o.append(k > 0 ? "," : "").append(p.val);
            o.append(']');
        } else if (v instanceof TreeNode) {
            List<String> out = new ArrayList<>();
            Deque<TreeNode> queue = new LinkedList<>();
            queue.add((TreeNode) v);
            while (!queue.isEmpty()) {
                TreeNode n = queue.poll();
                if (n == null) { out.add("null"); continue; }
                out.add(String.valueOf(n.val));
                queue.add(n.left);
                queue.add(n.right);
            }
            while (!out.isEmpty() && out.get(out.size() - 1).equals("null")) out.remove(out.size() - 1);
            o.append('[').append(String.join(",", out)).append(']');
        } else if (v.getClass().isArray()) {
            o.append('[');
            for (int i = 0; i < Array.getLength(v); i++) { if (i > 0) o.append(','); json(Array.get(v, i), o); }
            o.append(']');
        } else if (v instanceof Iterable) {
            o.append('[');
            boolean first = true;
            for (Object e : (Iterable<?>) v) { if (!first) o.append(','); first = false; json(e, o); }
            o.append(']');
        } else throw new IllegalArgumentException("coderlm: cannot write " + v.getClass());
    }

    public static void main(String[] argv) throws Exception {
        text = new String(Files.readAllBytes(Paths.get("cases.json")), "UTF-8");
        List<?> spec = (List<?>) parse();
        List<?> cases = (List<?>) spec.get(0);
        boolean reportArgs = (Boolean) spec.get(1);
        Method method = null;
        int arity = cases.isEmpty() ? 0 : ((List<?>) cases.get(0)).size();
        for (Method m : Solution.class.getDeclaredMethods())
            if (m.getName().equals("{{METHOD}}") && m.getParameterCount() == arity && (method == null || Modifier.isPublic(m.getModifiers()))) method = m;
        if (method == null) throw new NoSuchMethodException("coderlm: Solution.{{METHOD}} with " + arity + " parameters");
        method.setAccessible(true);
        Type[] types = method.getGenericParameterTypes();
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        StringBuilder out = new StringBuilder();
        if (argv[0].equals("memory")) {
            long[] bytes = new long[1];
            StringBuilder results = new StringBuilder("["), args = new StringBuilder("[");
            for (int pass = 0; pass < 2; pass++) {  // a warm-up pass, measured alike: first-use effects stay out
                bytes[0] = 0;
                results.setLength(1);
                args.setLength(1);
                for (int k = 0; k < cases.size(); k++) {
                    Object[] a = arguments(types, (List<?>) cases.get(k));
                    long before = threads.getCurrentThreadAllocatedBytes();
                    Object result = method.invoke(new Solution(), a);
                    long after = threads.getCurrentThreadAllocatedBytes();
                    bytes[0] += after - before;
                    if (k > 0) { results.append(','); args.append(','); }
                    json(result, results);
                    json(a, args);
                }
            }
            out.append("{\"results\": ").append(results).append(']');
            if (reportArgs) out.append(", \"args\": ").append(args).append(']');
            out.append(", \"alloc_bytes\": ").append(bytes[0]).append("}\n");
        } else {
            int warmups = Integer.parseInt(argv[1]), repeats = Integer.parseInt(argv[2]);
            out.append("{\"times\": [");
            for (int r = 0; r < warmups + repeats; r++) {
                long total = 0;
                for (Object c : cases) {
                    Object[] a = arguments(types, (List<?>) c);
                    long t0 = System.nanoTime();
                    method.invoke(new Solution(), a);
                    total += System.nanoTime() - t0;
                }
                if (r >= warmups) out.append(r > warmups ? "," : "").append(total / 1e9);
            }
            out.append("]}\n");
        }
        Files.write(Paths.get("coderlm_out.json"), out.toString().getBytes("UTF-8"));
    }

    static Object[] arguments(Type[] types, List<?> values) {
        Object[] a = new Object[types.length];
        for (int i = 0; i < types.length; i++) a[i] = convert(values.get(i), types[i]);
        return a;
    }
}
