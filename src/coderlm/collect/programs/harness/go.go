// coderlm LeetCode harness for Go (docs/programs.md), filled in by coderlm.collect.programs.harness.
// argv: memory | time WARMUPS REPEATS. Reads cases.json, writes coderlm_out.json. Memory: runtime.ReadMemStats
// around each call (TotalAlloc, Mallocs), run with GOGC=off so no collection interleaves.
package main

import (
	"bufio"
	"bytes"
	"cmp"
	"container/heap"
	"container/list"
	coderlmJSON "encoding/json"
	"fmt"
	"maps"
	"math"
	"math/bits"
	coderlmOS "os"
	coderlmReflect "reflect"
	coderlmRuntime "runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	coderlmTime "time"
	"unicode"
)

{{SOLUTION}}

var _ = bufio.NewReader
var _ = bytes.Compare
var _ = cmp.Compare[int]
var _ = fmt.Sprint
var _ = heap.Init
var _ = list.New
var _ = math.Abs
var _ = bits.OnesCount
var _ = maps.Clone[map[int]int]
var _ = slices.Sort[[]int]
var _ = sort.Ints
var _ = strconv.Itoa
var _ = strings.Split
var _ = unicode.IsDigit

type ListNode struct {
	Val  int
	Next *ListNode
}

type TreeNode struct {
	Val   int
	Left  *TreeNode
	Right *TreeNode
}

func coderlmNumber(v interface{}) coderlmJSON.Number {
	switch x := v.(type) {
	case coderlmJSON.Number:
		return x
	case bool:
		if x {
			return "1"
		}
		return "0"
	case string:
		return coderlmJSON.Number(strconv.Itoa(int([]rune(x)[0])))
	}
	panic("coderlm: not a number")
}

func coderlmConvert(v interface{}, t coderlmReflect.Type) coderlmReflect.Value {
	out := coderlmReflect.New(t).Elem()
	if t == coderlmReflect.TypeOf(&ListNode{}) {
		head := &ListNode{}
		tail := head
		for _, e := range v.([]interface{}) {
			n, _ := coderlmNumber(e).Int64()
			tail.Next = &ListNode{Val: int(n)}
			tail = tail.Next
		}
		return coderlmReflect.ValueOf(head.Next)
	}
	if t == coderlmReflect.TypeOf(&TreeNode{}) {
		return coderlmReflect.ValueOf(coderlmTree(v))
	}
	switch t.Kind() {
	case coderlmReflect.Int, coderlmReflect.Int8, coderlmReflect.Int16, coderlmReflect.Int32, coderlmReflect.Int64:
		n, _ := coderlmNumber(v).Int64()
		out.SetInt(n)
	case coderlmReflect.Uint, coderlmReflect.Uint8, coderlmReflect.Uint16, coderlmReflect.Uint32, coderlmReflect.Uint64:
		n, _ := strconv.ParseUint(string(coderlmNumber(v)), 10, 64)
		out.SetUint(n)
	case coderlmReflect.Float32, coderlmReflect.Float64:
		f, _ := coderlmNumber(v).Float64()
		out.SetFloat(f)
	case coderlmReflect.Bool:
		out.SetBool(v.(bool))
	case coderlmReflect.String:
		out.SetString(v.(string))
	case coderlmReflect.Slice:
		items, ok := v.([]interface{})
		if !ok {
			s := v.(string)
			if t.Elem().Kind() == coderlmReflect.Uint8 {
				return coderlmReflect.ValueOf([]byte(s)).Convert(t)
			}
			for _, r := range s {
				items = append(items, string(r))
			}
		}
		out = coderlmReflect.MakeSlice(t, len(items), len(items))
		for i, e := range items {
			out.Index(i).Set(coderlmConvert(e, t.Elem()))
		}
	default:
		panic("coderlm: cannot convert to " + t.String())
	}
	return out
}

func coderlmTree(v interface{}) *TreeNode {
	items, _ := v.([]interface{})
	if len(items) == 0 || items[0] == nil {
		return nil
	}
	val := func(e interface{}) int { n, _ := coderlmNumber(e).Int64(); return int(n) }
	root := &TreeNode{Val: val(items[0])}
	queue := []*TreeNode{root}
	i := 1
	for len(queue) > 0 && i < len(items) {
		n := queue[0]
		queue = queue[1:]
		if i < len(items) && items[i] != nil {
			n.Left = &TreeNode{Val: val(items[i])}
			queue = append(queue, n.Left)
		}
		i++
		if i < len(items) && items[i] != nil {
			n.Right = &TreeNode{Val: val(items[i])}
			queue = append(queue, n.Right)
		}
		i++
	}
	return root
}

func coderlmWrite(v coderlmReflect.Value, o *strings.Builder) {
	switch v.Kind() {
	case coderlmReflect.Invalid:
		o.WriteString("null")
	case coderlmReflect.Ptr:
		if v.IsNil() {
			o.WriteString("null")
		} else if l, ok := v.Interface().(*ListNode); ok {
			o.WriteString("[")
			for k := 0; l != nil && k < 1000000; l, k = l.Next, k+1 {
				if k > 0 {
					o.WriteString(",")
				}
				o.WriteString(strconv.Itoa(l.Val))
			}
			o.WriteString("]")
		} else if t, ok := v.Interface().(*TreeNode); ok {
			var out []string
			queue := []*TreeNode{t}
			for len(queue) > 0 {
				n := queue[0]
				queue = queue[1:]
				if n == nil {
					out = append(out, "null")
					continue
				}
				out = append(out, strconv.Itoa(n.Val))
				queue = append(queue, n.Left, n.Right)
			}
			for len(out) > 0 && out[len(out)-1] == "null" {
				out = out[:len(out)-1]
			}
			o.WriteString("[" + strings.Join(out, ",") + "]")
		} else {
			coderlmWrite(v.Elem(), o)
		}
	case coderlmReflect.Slice, coderlmReflect.Array:
		o.WriteString("[")
		for i := 0; i < v.Len(); i++ {
			if i > 0 {
				o.WriteString(",")
			}
			coderlmWrite(v.Index(i), o)
		}
		o.WriteString("]")
	case coderlmReflect.Float32, coderlmReflect.Float64:
		f := v.Float()
		if math.IsInf(f, 0) || math.IsNaN(f) {
			o.WriteString("null")
		} else {
			o.WriteString(strconv.FormatFloat(f, 'g', -1, 64))
		}
	default:
		text, err := coderlmJSON.Marshal(v.Interface())
		if err != nil {
			panic(err)
		}
		o.Write(text)
	}
}

func coderlmArgs(fn coderlmReflect.Value, values []interface{}) []coderlmReflect.Value {
	t := fn.Type()
	if t.NumIn() != len(values) {
		panic("coderlm: the function takes " + strconv.Itoa(t.NumIn()) + " arguments, " + strconv.Itoa(len(values)) + " given")
	}
	args := make([]coderlmReflect.Value, len(values))
	for i, v := range values {
		args[i] = coderlmConvert(v, t.In(i))
	}
	return args
}

func main() {
	fn := coderlmReflect.ValueOf({{METHOD}})
	raw, err := coderlmOS.ReadFile("cases.json")
	if err != nil {
		panic(err)
	}
	decoder := coderlmJSON.NewDecoder(bytes.NewReader(raw))
	decoder.UseNumber()
	var spec []interface{}
	if err := decoder.Decode(&spec); err != nil {
		panic(err)
	}
	cases := spec[0].([]interface{})
	reportArgs := spec[1].(bool)
	var o strings.Builder
	if coderlmOS.Args[1] == "memory" {
		var before, after coderlmRuntime.MemStats
		var bytesAllocated, count uint64
		var results, arguments strings.Builder
		for pass := 0; pass < 2; pass++ { // a warm-up pass, measured alike: first-use effects stay out
			bytesAllocated, count = 0, 0
			results.Reset()
			arguments.Reset()
			for k, c := range cases {
				args := coderlmArgs(fn, c.([]interface{}))
				coderlmRuntime.ReadMemStats(&before)
				out := fn.Call(args)
				coderlmRuntime.ReadMemStats(&after)
				bytesAllocated += after.TotalAlloc - before.TotalAlloc
				count += after.Mallocs - before.Mallocs
				if k > 0 {
					results.WriteString(",")
					arguments.WriteString(",")
				}
				if len(out) > 0 {
					coderlmWrite(out[0], &results)
				} else {
					results.WriteString("null")
				}
				arguments.WriteString("[")
				for i, a := range args {
					if i > 0 {
						arguments.WriteString(",")
					}
					coderlmWrite(a, &arguments)
				}
				arguments.WriteString("]")
			}
		}
		o.WriteString("{\"results\": [" + results.String() + "]")
		if reportArgs {
			o.WriteString(", \"args\": [" + arguments.String() + "]")
		}
		o.WriteString(", \"alloc_bytes\": " + strconv.FormatUint(bytesAllocated, 10))
		o.WriteString(", \"alloc_count\": " + strconv.FormatUint(count, 10) + "}\n")
	} else {
		warmups, _ := strconv.Atoi(coderlmOS.Args[2])
		repeats, _ := strconv.Atoi(coderlmOS.Args[3])
		var times []string
		for r := 0; r < warmups+repeats; r++ {
			var total coderlmTime.Duration
			for _, c := range cases {
				args := coderlmArgs(fn, c.([]interface{}))
				t0 := coderlmTime.Now()
				fn.Call(args)
				total += coderlmTime.Since(t0)
			}
			if r >= warmups {
				times = append(times, strconv.FormatFloat(total.Seconds(), 'g', -1, 64))
			}
		}
		o.WriteString("{\"times\": [" + strings.Join(times, ",") + "]}\n")
	}
	if err := coderlmOS.WriteFile("coderlm_out.json", []byte(o.String()), 0o644); err != nil {
		panic(err)
	}
}
