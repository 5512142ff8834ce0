// coderlm LeetCode harness for C++: the part that does not depend on the solution (docs/programs.md).
// Built once (support "cpp_pch"): precompiled with <bits/stdc++.h>, included first by cpp.cpp, and with
// CODERLM_HARNESS_IMPL compiled into cpp_harness.o (parsing, list and tree conversions, the driver), which the
// program links. Memory counters come from the LD_PRELOAD allocation shim (alloc_shim.c), found with dlsym.
#ifndef CODERLM_HARNESS_H  // a guard, not #pragma once: the same text is both precompiled and #included
#define CODERLM_HARNESS_H
#include <bits/stdc++.h>
#include <dlfcn.h>
using namespace std;

struct ListNode {
    int val;
    ListNode *next;
    ListNode() : val(0), next(nullptr) {}
    ListNode(int x) : val(x), next(nullptr) {}
    ListNode(int x, ListNode *next) : val(x), next(next) {}
};
struct TreeNode {
    int val;
    TreeNode *left;
    TreeNode *right;
    TreeNode() : val(0), left(nullptr), right(nullptr) {}
    TreeNode(int x) : val(x), left(nullptr), right(nullptr) {}
    TreeNode(int x, TreeNode *left, TreeNode *right) : val(x), left(left), right(right) {}
};

namespace coderlm {
struct J {  // a parsed JSON value; numbers keep their text
    char t = 'n';  // n(ull) b(ool) d(igits) s(tring) a(rray)
    bool b = false;
    string s;
    vector<J> a;
};
J parse(const string &text);
string quote(const string &s);

template <class T, class = void> struct Conv;
template <class T> struct Conv<T, enable_if_t<is_integral_v<T> && !is_same_v<T, bool> && !is_same_v<T, char>>> {
    static T from(const J &v) { return v.t == 'b' ? (T)v.b : v.t == 's' ? (T)v.s[0] : (T)stoll(v.s); }
    static string to(T v) { return to_string(v); }
};
template <class T> struct Conv<T, enable_if_t<is_floating_point_v<T>>> {
    static T from(const J &v) { return (T)stod(v.s); }
    static string to(T v) { if (!isfinite((double)v)) return "null"; char b[40]; snprintf(b, sizeof b, "%.17g", (double)v); return b; }
};
template <> struct Conv<bool> {
    static bool from(const J &v) { return v.t == 'b' ? v.b : stoll(v.s) != 0; }
    static string to(bool v) { return v ? "true" : "false"; }
};
template <> struct Conv<char> {
    static char from(const J &v) { return v.t == 's' ? v.s[0] : (char)stoll(v.s); }
    static string to(char v) { return quote(string(1, v)); }
};
template <> struct Conv<string> {
    static string from(const J &v) { return v.s; }
    static string to(const string &v) { return quote(v); }
};
template <class T> struct Conv<vector<T>> {
    static vector<T> from(const J &v) {
        vector<T> out;
        if constexpr (is_arithmetic_v<T>)
            if (v.t == 's') { for (char c : v.s) out.push_back((T)c); return out; }
        for (const J &e : v.a) out.push_back(Conv<T>::from(e));
        return out;
    }
    static string to(const vector<T> &v) {
        string o = "[";
        for (size_t k = 0; k < v.size(); k++) { if (k) o += ","; o += Conv<T>::to(v[k]); }
        return o + "]";
    }
};
template <> struct Conv<ListNode *> {
    static ListNode *from(const J &v);
    static string to(ListNode *p);
};
template <> struct Conv<TreeNode *> {
    static TreeNode *from(const J &v);
    static string to(TreeNode *root);
};

using Counters = void (*)(long *);
extern Counters start_counters, stop_counters;
struct Call { string result; vector<string> args; long counters[4] = {0, 0, 0, 0}; double seconds = 0; };

template <class S, class F, class Tuple, size_t... I>
Call invoke(F f, Tuple &args, bool counting, index_sequence<I...>) {
    Call call;
    using R = decltype((declval<S &>().*f)(get<I>(args)...));
    long dummy[4];
    if (counting) start_counters(dummy);
    auto t0 = chrono::steady_clock::now();
    S *s = new S();
    if constexpr (is_void_v<R>) {
        (s->*f)(get<I>(args)...);
        call.seconds = chrono::duration<double>(chrono::steady_clock::now() - t0).count();
        if (counting) stop_counters(call.counters);
    } else {
        R r = (s->*f)(get<I>(args)...);
        call.seconds = chrono::duration<double>(chrono::steady_clock::now() - t0).count();
        if (counting) stop_counters(call.counters);
        call.result = Conv<decay_t<R>>::to(r);
    }
    (call.args.push_back(Conv<decay_t<tuple_element_t<I, Tuple>>>::to(get<I>(args))), ...);
    return call;
}
template <class F> struct Sig;
template <class S, class R, class... A> struct Sig<R (S::*)(A...)> { using Args = tuple<decay_t<A>...>; };
template <class S, class R, class... A> struct Sig<R (S::*)(A...) const> { using Args = tuple<decay_t<A>...>; };

template <class S, class F, size_t... I>
Call run(F f, const J &input, bool counting, index_sequence<I...> seq) {
    if (input.a.size() != sizeof...(I)) { fprintf(stderr, "coderlm: %zu arguments given, the method takes %zu\n", input.a.size(), sizeof...(I)); exit(3); }
    typename Sig<F>::Args args{Conv<tuple_element_t<I, typename Sig<F>::Args>>::from(input.a[I])...};
    return invoke<S>(f, args, counting, seq);
}
template <class S, class F> Call run(F f, const J &input, bool counting) {
    return run<S>(f, input, counting, make_index_sequence<tuple_size_v<typename Sig<F>::Args>>{});
}
using Runner = Call (*)(const J &, bool);
int drive(Runner run, int argc, char **argv);  // argv: memory | time WARMUPS REPEATS

#ifdef CODERLM_HARNESS_IMPL  // compiled once into cpp_harness.o
struct Parser {
    const string &x;
    size_t i = 0;
    void ws() { while (i < x.size() && isspace((unsigned char)x[i])) i++; }
    J value() {
        ws();
        J v;
        char c = x[i];
        if (c == '[') {
            v.t = 'a'; i++; ws();
            if (x[i] == ']') { i++; return v; }
            while (true) { v.a.push_back(value()); ws(); if (x[i++] == ']') break; }
        } else if (c == '"') {
            v.t = 's'; i++;
            while (x[i] != '"') {
                if (x[i] == '\\') {
                    char e = x[++i];
                    if (e == 'u') { unsigned code = stoul(x.substr(i + 1, 4), nullptr, 16); i += 4;
                        if (code < 0x80) v.s += (char)code;
                        else if (code < 0x800) { v.s += (char)(0xC0 | (code >> 6)); v.s += (char)(0x80 | (code & 0x3F)); }
                        else { v.s += (char)(0xE0 | (code >> 12)); v.s += (char)(0x80 | ((code >> 6) & 0x3F)); v.s += (char)(0x80 | (code & 0x3F)); }
                    } else v.s += e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e == 'b' ? '\b' : e == 'f' ? '\f' : e;
                    i++;
                } else v.s += x[i++];
            }
            i++;
        } else if (c == 't' || c == 'f') { v.t = 'b'; v.b = c == 't'; i += c == 't' ? 4 : 5; }
        else if (c == 'n') { i += 4; }
        else { v.t = 'd'; size_t j = i; while (j < x.size() && (isdigit((unsigned char)x[j]) || strchr("+-.eE", x[j]))) j++; v.s = x.substr(i, j - i); i = j; }
        return v;
    }
};

J parse(const string &text) { return Parser{text}.value(); }
string quote(const string &s) {
    string o = "\"";
    for (unsigned char c : s) {
        if (c == '"' || c == '\\') { o += '\\'; o += (char)c; }
        else if (c < 0x20) { char b[8]; snprintf(b, sizeof b, "\\u%04x", c); o += b; }
        else o += (char)c;
    }
    return o + "\"";
}
ListNode *Conv<ListNode *>::from(const J &v) {
        ListNode head, *tail = &head;
        for (const J &e : v.a) { tail->next = new ListNode(Conv<int>::from(e)); tail = tail->next; }
        return head.next;
    }
string Conv<ListNode *>::to(ListNode *p) {
        string o = "[";
        for (int k = 0; p && k < 1000000; p = p->next, k++) { if (k) o += ","; o += to_string(p->val); }
        return o + "]";
    }
TreeNode *Conv<TreeNode *>::from(const J &v) {
        if (v.t != 'a' || v.a.empty() || v.a[0].t == 'n') return nullptr;
        TreeNode *root = new TreeNode(Conv<int>::from(v.a[0]));
        deque<TreeNode *> q{root};
        size_t k = 1;
        while (!q.empty() && k < v.a.size()) {
            TreeNode *n = q.front(); q.pop_front();
            if (k < v.a.size() && v.a[k].t != 'n') { n->left = new TreeNode(Conv<int>::from(v.a[k])); q.push_back(n->left); }
            k++;
            if (k < v.a.size() && v.a[k].t != 'n') { n->right = new TreeNode(Conv<int>::from(v.a[k])); q.push_back(n->right); }
            k++;
        }
        return root;
    }
string Conv<TreeNode *>::to(TreeNode *root) {
        vector<string> out;
        deque<TreeNode *> q{root};
        while (!q.empty()) {
            TreeNode *n = q.front(); q.pop_front();
            if (!n) { out.push_back("null"); continue; }
            out.push_back(to_string(n->val)); q.push_back(n->left); q.push_back(n->right);
        }
        while (!out.empty() && out.back() == "null") out.pop_back();
        string o = "[";
        for (size_t k = 0; k < out.size(); k++) { if (k) o += ","; o += out[k]; }
        return o + "]";
    }

Counters start_counters, stop_counters;

// Reads cases.json, calls run on each case, writes coderlm_out.json.
int drive(Runner run, int argc, char **argv) {
    string mode = argc > 1 ? argv[1] : "memory";
    ifstream in("cases.json");
    string text((istreambuf_iterator<char>(in)), istreambuf_iterator<char>());
    J spec = parse(text);  // [cases, report_args, kinds]
    const J &cases = spec.a[0];
    bool report_args = spec.a[1].b;
    FILE *out = fopen("coderlm_out.json", "w");
    if (mode == "memory") {
        start_counters = (Counters)dlsym(RTLD_DEFAULT, "coderlm_alloc_start");
        stop_counters = (Counters)dlsym(RTLD_DEFAULT, "coderlm_alloc_stop");
        if (!start_counters || !stop_counters) { fprintf(stderr, "coderlm: allocation shim not loaded (LD_PRELOAD)\n"); return 3; }
        for (const J &c : cases.a) run(c, true);  // warm-up, measured alike: first-use effects stay out
        long peak = 0, bytes = 0, count = 0;
        string results = "[", args = "[";
        for (size_t k = 0; k < cases.a.size(); k++) {
            Call call = run(cases.a[k], true);
            peak = max(peak, call.counters[0]); bytes += call.counters[1]; count += call.counters[2];
            results += (k ? "," : "") + (call.result.empty() ? string("null") : call.result);
            string a = "[";
            for (size_t m = 0; m < call.args.size(); m++) a += (m ? "," : "") + call.args[m];
            args += (k ? "," : "") + a + "]";
        }
        fprintf(out, "{\"results\": %s]", results.c_str());
        if (report_args) fprintf(out, ", \"args\": %s]", args.c_str());
        fprintf(out, ", \"heap_peak_bytes\": %ld, \"alloc_bytes\": %ld, \"alloc_count\": %ld}\n", peak, bytes, count);
    } else {
        int warmups = atoi(argv[2]), repeats = atoi(argv[3]);
        string times = "[";
        for (int r = 0; r < warmups + repeats; r++) {
            double total = 0;
            for (const J &c : cases.a) total += run(c, false).seconds;
            if (r >= warmups) { char b[40]; snprintf(b, sizeof b, "%s%.9g", r > warmups ? "," : "", total); times += b; }
        }
        fprintf(out, "{\"times\": %s]}\n", times.c_str());
    }
    fclose(out);
    return 0;
}
#endif
}  // namespace coderlm
#endif  // CODERLM_HARNESS_H
