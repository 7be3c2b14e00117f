/*
 * Compiled inner loops of the tree engine (sklearn_fimp/_tree_engine.py).
 *
 * Plain C called through ctypes (sklearn_fimp/_kernels.py), which releases
 * the GIL for the duration of each call. The module init function only
 * makes the file importable as an extension so that setuptools builds it.
 *
 * Trees are given as arrays of node_t, scikit-learn's children_left,
 * children_right, threshold and missing_go_to_left packed together, with
 * `column` the column of X each split node reads (a Bagging member's
 * feature subset already applied); leaves have left == -1. Descending
 * follows scikit-learn's own rule: a missing value goes where
 * missing_go_to_left says, otherwise x <= threshold goes left, comparing the
 * float32 value with the float64 threshold.
 *
 * Routing records, for each row and each column its path splits on, the
 * interval lower < x <= upper that keeps the row on its path; the bounds are
 * the float32 values just below the thresholds (`threshold32`), for which
 * the float32 comparisons agree with scikit-learn's. A row with a missing
 * value in that column gets lower = +inf: it is always re-routed. With it,
 * the first node of the path that splits on the column: when a group of one
 * column is permuted, the path above that node is unchanged, so a moved row
 * is re-routed from there. The pairs are stored column by column, as a CSC
 * matrix's indptr does.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* One node, packed so that a descent touches one cache line per node. */
typedef struct {
    int32_t left;
    int32_t right;
    int32_t column;
    uint8_t missing_left;
    uint8_t padding[3];
    double threshold;
} node_t;

static inline int64_t next_node(const node_t *node, float x)
{
    if (isnan(x)) {
        return node->missing_left ? node->left : node->right;
    }
    return ((double)x <= node->threshold) ? node->left : node->right;
}

/* Leaf of a row whose columns in `in_group` are read from `source` and the
 * others from `row`, from node `node` of its path on. */
static inline int64_t descend(const node_t *nodes, int64_t node,
                              const float *row, const float *source,
                              const uint8_t *in_group)
{
    while (nodes[node].left != -1) {
        int64_t c = nodes[node].column;
        node = next_node(nodes + node, in_group[c] ? source[c] : row[c]);
    }
    return node;
}

/*
 * Route rows X[rows[i]] (i < n_rows) through one tree: leaves[i], and for
 * each column the number of rows whose path splits on it (counts, length
 * n_columns, zeroed by the caller). Returns 0, or -1 when out of memory.
 */
int route_count(const node_t *nodes, const float *X,
                int64_t n_columns, const int64_t *rows, int64_t n_rows,
                int64_t *leaves, int64_t *counts)
{
    int64_t *seen = malloc(n_columns * sizeof(int64_t));
    if (seen == NULL) {
        return -1;
    }
    for (int64_t c = 0; c < n_columns; c++) {
        seen[c] = -1;
    }
    for (int64_t i = 0; i < n_rows; i++) {
        const float *row = X + rows[i] * n_columns;
        int64_t node = 0;
        while (nodes[node].left != -1) {
            int64_t c = nodes[node].column;
            if (seen[c] != i) {
                seen[c] = i;
                counts[c]++;
            }
            node = next_node(nodes + node, row[c]);
        }
        leaves[i] = node;
    }
    free(seen);
    return 0;
}

/*
 * Second pass of routing: fill path_rows, lower and upper column by column
 * (ptr: cumulative counts from route_count, length n_columns + 1).
 * Returns 0, or -1 when out of memory.
 */
int route_fill(const node_t *nodes, const float *threshold32,
               const float *X, int64_t n_columns, const int64_t *rows,
               int64_t n_rows, const int64_t *ptr, int32_t *path_rows,
               float *lower, float *upper, int32_t *first_node)
{
    int64_t *cursor = malloc(n_columns * sizeof(int64_t));
    int64_t *seen = malloc(n_columns * sizeof(int64_t));
    int64_t *slot = malloc(n_columns * sizeof(int64_t));
    int64_t *used = malloc(n_columns * sizeof(int64_t));
    float *low = malloc(n_columns * sizeof(float));
    float *high = malloc(n_columns * sizeof(float));
    int64_t *first = malloc(n_columns * sizeof(int64_t));
    int status = 0;
    if (!cursor || !seen || !slot || !used || !low || !high || !first) {
        status = -1;
        goto done;
    }
    for (int64_t c = 0; c < n_columns; c++) {
        cursor[c] = ptr[c];
        seen[c] = -1;
    }
    for (int64_t i = 0; i < n_rows; i++) {
        const float *row = X + rows[i] * n_columns;
        int64_t n_used = 0;
        int64_t node = 0;
        while (nodes[node].left != -1) {
            int64_t c = nodes[node].column;
            float x = row[c];
            if (seen[c] != i) {
                seen[c] = i;
                slot[c] = n_used;
                used[n_used] = c;
                first[n_used] = node;
                low[n_used] = -INFINITY;
                high[n_used] = INFINITY;
                n_used++;
            }
            int64_t s = slot[c];
            int64_t child = next_node(nodes + node, x);
            if (isnan(x)) {
                low[s] = INFINITY;
            } else if (child == nodes[node].left) {
                if (threshold32[node] < high[s]) {
                    high[s] = threshold32[node];
                }
            } else if (threshold32[node] > low[s]) {
                low[s] = threshold32[node];
            }
            node = child;
        }
        for (int64_t s = 0; s < n_used; s++) {
            int64_t at = cursor[used[s]]++;
            path_rows[at] = (int32_t)i;
            lower[at] = low[s];
            upper[at] = high[s];
            first_node[at] = (int32_t)first[s];
        }
    }
done:
    free(cursor);
    free(seen);
    free(slot);
    free(used);
    free(low);
    free(high);
    free(first);
    return status;
}

/*
 * Leaves of rows X[rows[i]] with the columns in `in_group` read from row
 * X[sources[i]] instead (every row re-routed).
 */
void permuted_leaves(const node_t *nodes, const float *X,
                     int64_t n_columns, const int64_t *rows,
                     const int64_t *sources, int64_t n_rows,
                     const uint8_t *in_group, int64_t *leaves)
{
    for (int64_t i = 0; i < n_rows; i++) {
        leaves[i] = descend(nodes, 0, X + rows[i] * n_columns,
                            X + sources[i] * n_columns, in_group);
    }
}

/*
 * One tree and its rows X[0], ..., X[n_rows - 1], routed by route_fill
 * (rows = 0, ..., n_rows - 1); for each of n_repeats permutations (row r of
 * sources, n_repeats x n_rows): the rows that reach another leaf when the
 * group's columns are read from X[sources[r, i]], and those leaves. Writes
 * the moved rows (indices i) and their new leaves repeat after repeat into
 * moved and new_leaves (room for n_repeats * n_rows each) and how many per
 * repeat into counts; returns the total, or -1 when out of memory.
 */
int64_t moved_leaves(const node_t *nodes, const float *X, int64_t n_columns,
                     int64_t n_rows, const int64_t *sources,
                     int64_t n_repeats, const int64_t *ptr,
                     const int32_t *path_rows, const float *lower,
                     const float *upper, const int32_t *first_node,
                     const int64_t *group, int64_t n_group,
                     const uint8_t *in_group, const int64_t *leaves,
                     int64_t *moved,
                     int64_t *new_leaves, int64_t *counts)
{
    int64_t *stamp = malloc((n_rows > 0 ? n_rows : 1) * sizeof(int64_t));
    if (stamp == NULL) {
        return -1;
    }
    for (int64_t i = 0; i < n_rows; i++) {
        stamp[i] = -1;
    }
    int64_t n_moved = 0;
    for (int64_t r = 0; r < n_repeats; r++) {
        const int64_t *source_rows = sources + r * n_rows;
        int64_t first = n_moved;
        for (int64_t g = 0; g < n_group; g++) {
            int64_t c = group[g];
            for (int64_t k = ptr[c]; k < ptr[c + 1]; k++) {
                int64_t i = path_rows[k];
                if (stamp[i] == r) {
                    continue;
                }
                const float *source = X + source_rows[i] * n_columns;
                float v = source[c];
                if (v > lower[k] && v <= upper[k]) {
                    continue;
                }
                stamp[i] = r;
                int64_t leaf =
                    descend(nodes, n_group == 1 ? first_node[k] : 0,
                            X + i * n_columns, source, in_group);
                if (leaf != leaves[i]) {
                    moved[n_moved] = i;
                    new_leaves[n_moved] = leaf;
                    n_moved++;
                }
            }
        }
        counts[r] = n_moved - first;
    }
    free(stamp);
    return n_moved;
}

/*
 * Every tree of an ensemble at once: add to out (n_positions x n_outputs)
 * the change of each tree's leaf value on the rows that leave their path.
 *
 * Tree t's nodes start at node_offset[t] in the node arrays and in table
 * (one row of n_outputs values per node); its routed rows start at
 * row_offset[t] in positions, leaves and the pairs' row indices, and
 * row_offset[n_trees] is the end; positions[.] is a row's index in out,
 * X row chunk_start + position, and it reads the group's columns from
 * X[sources[position]]; its pairs are indexed by
 * ptr[t * (n_columns + 1) + c]. Returns the number of moved (row, tree)
 * pairs, or -1 when out of memory.
 */
int64_t add_moved_changes(int64_t n_trees, const int64_t *node_offset,
                          const node_t *nodes, const double *table,
                          int64_t n_outputs, const int64_t *row_offset,
                          const int64_t *positions, const int64_t *leaves,
                          const int64_t *ptr, const int32_t *path_rows,
                          const float *lower, const float *upper,
                          const int32_t *first_node, const float *X,
                          int64_t n_columns,
                          int64_t chunk_start, const int64_t *sources,
                          const int64_t *group, int64_t n_group,
                          const uint8_t *in_group, double *out)
{
    int64_t widest = 1;
    for (int64_t t = 0; t < n_trees; t++) {
        int64_t n = row_offset[t + 1] - row_offset[t];
        if (n > widest) {
            widest = n;
        }
    }
    int64_t *stamp = malloc(widest * sizeof(int64_t));
    if (stamp == NULL) {
        return -1;
    }
    for (int64_t i = 0; i < widest; i++) {
        stamp[i] = -1;
    }
    int64_t n_moved = 0;
    for (int64_t t = 0; t < n_trees; t++) {
        const node_t *tree = nodes + node_offset[t];
        const double *tree_table = table + node_offset[t] * n_outputs;
        const int64_t *tree_ptr = ptr + t * (n_columns + 1);
        const int64_t *tree_positions = positions + row_offset[t];
        const int64_t *tree_leaves = leaves + row_offset[t];
        for (int64_t g = 0; g < n_group; g++) {
            int64_t c = group[g];
            for (int64_t k = tree_ptr[c]; k < tree_ptr[c + 1]; k++) {
                int64_t i = path_rows[k];
                if (stamp[i] == t) {
                    continue;
                }
                int64_t position = tree_positions[i];
                const float *source = X + sources[position] * n_columns;
                float v = source[c];
                if (v > lower[k] && v <= upper[k]) {
                    continue;
                }
                stamp[i] = t;
                int64_t leaf = descend(
                    tree, n_group == 1 ? first_node[k] : 0,
                    X + (chunk_start + position) * n_columns, source, in_group);
                int64_t old = tree_leaves[i];
                if (leaf == old) {
                    continue;
                }
                n_moved++;
                const double *gained = tree_table + leaf * n_outputs;
                const double *lost = tree_table + old * n_outputs;
                double *row_out = out + position * n_outputs;
                for (int64_t o = 0; o < n_outputs; o++) {
                    row_out[o] += gained[o] - lost[o];
                }
            }
        }
    }
    free(stamp);
    return n_moved;
}

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_ckernels",
    "Compiled inner loops of the tree engine; called through ctypes.", -1,
    NULL};

PyMODINIT_FUNC PyInit__ckernels(void) { return PyModule_Create(&module); }
