/*
 * Compiled inner loops of the tree engine (sklearn_fimp/_engine/).
 *
 * Plain C called through ctypes (sklearn_fimp/_engine/_kernels.py, one typed
 * wrapper per function here), which releases the GIL for the duration of
 * each call. The module init function only makes the file importable as an
 * extension so that setuptools builds it. record_layout lets the loader
 * check its record dtypes against node_t and pair_t.
 *
 * Trees are given as arrays of node_t, scikit-learn's children_left,
 * children_right, threshold and missing_go_to_left packed together, with
 * `column` the column of X each split node reads (a Bagging estimator's
 * feature subset already applied); leaves have left == -1. Descending
 * follows scikit-learn's own rule: a missing value goes where
 * missing_go_to_left says, otherwise x <= threshold goes left, comparing the
 * float32 value with the float64 threshold. A categorical node (category_set
 * >= 0) instead sends left the category codes of its set: the uint32 words
 * categories[category_set + 1 ...], categories[category_set] of them, bit
 * v % 32 of word v / 32 for the code v; a code outside the set (or not a
 * non-negative integer) goes right.
 *
 * Routing records, for each row and each column its path splits on, the
 * interval lower < x <= upper that keeps the row on its path; the bounds are
 * the float32 values just below the thresholds (`threshold32`), for which
 * the float32 comparisons agree with scikit-learn's. A row with a missing
 * value in that column gets lower = +inf: it is always re-routed. With it,
 * the first node of the path that splits on the column: when a group of one
 * column is permuted, the path above that node is unchanged, so a moved row
 * is re-routed from there. The pairs are stored column by column, as a CSC
 * matrix's indptr does. A row that passes a categorical node on a column is
 * always re-routed too (lower = +inf): a set of codes is no interval.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* One (row, column) pair of a routing: the row, the first node of its path
 * that splits on the column, and the interval the path allows the column.
 * Packed so that routing writes, and a scan reads, one stream per column. */
typedef struct {
    int32_t row;
    int32_t first_node;
    float lower;
    float upper;
} pair_t;

/* One node, packed in 32 bytes so that a descent touches one cache line per
 * node; category_set is -1 on numerical splits and leaves. */
typedef struct {
    int32_t left;
    int32_t right;
    int32_t column;
    int32_t category_set;
    uint8_t missing_left;
    uint8_t padding[7];
    double threshold;
} node_t;

/* Sizes and field offsets of node_t and pair_t, for the loader to check
 * that its record dtypes match: out[0] = sizeof(node_t), then (offset,
 * size) of left, right, column, category_set, missing_left, threshold; then
 * sizeof(pair_t) and (offset, size) of row, first_node, lower, upper.
 * Returns the number of values written (22); out has room for n_out. */
#define FIELD(type, name) \
    (int64_t)offsetof(type, name), (int64_t)sizeof(((type *)0)->name)

int64_t record_layout(int64_t *out, int64_t n_out)
{
    int64_t layout[] = {
        (int64_t)sizeof(node_t), FIELD(node_t, left), FIELD(node_t, right),
        FIELD(node_t, column), FIELD(node_t, category_set),
        FIELD(node_t, missing_left),
        FIELD(node_t, threshold),
        (int64_t)sizeof(pair_t), FIELD(pair_t, row), FIELD(pair_t, first_node),
        FIELD(pair_t, lower), FIELD(pair_t, upper),
    };
    int64_t n = (int64_t)(sizeof(layout) / sizeof(layout[0]));
    for (int64_t i = 0; i < n && i < n_out; i++) {
        out[i] = layout[i];
    }
    return n;
}

#undef FIELD

static inline int in_category_set(const uint32_t *set, float x)
{
    /* false for negative codes, codes past the set's words and NaN */
    if (!(x >= 0.0f) || x >= 32.0f * (float)set[0]) {
        return 0;
    }
    int64_t v = (int64_t)x;
    return (float)v == x && ((set[1 + v / 32] >> (v % 32)) & 1u);
}

static inline int64_t next_node(const node_t *node, float x,
                                const uint32_t *categories)
{
    if (isnan(x)) {
        return node->missing_left ? node->left : node->right;
    }
    if (node->category_set >= 0) {
        return in_category_set(categories + node->category_set, x)
                   ? node->left
                   : node->right;
    }
    return ((double)x <= node->threshold) ? node->left : node->right;
}

/* Leaf of a row from node `node` of its path on, reading column c from
 * row[c] unless slot[c] >= 0, in which case from
 * replaced[slot[c] * stride + position]: the replaced columns of a group,
 * laid out column by column so that each pair reads one float. */
static inline int64_t descend(const node_t *nodes,
                              const uint32_t *categories, int64_t node,
                              const float *row, const int32_t *slot,
                              const float *replaced, int64_t stride,
                              int64_t position)
{
    while (nodes[node].left != -1) {
        int64_t c = nodes[node].column;
        float x = slot[c] >= 0 ? replaced[slot[c] * stride + position] : row[c];
        node = next_node(nodes + node, x, categories);
    }
    return node;
}

/* The same, reading the group's columns from the row `source` (slot[c] >= 0)
 * instead: for one tree, where gathering the permuted columns of every row
 * would read more of X than the pairs do. */
static inline int64_t descend_source(const node_t *nodes,
                                     const uint32_t *categories, int64_t node,
                                     const float *row, const int32_t *slot,
                                     const float *source)
{
    while (nodes[node].left != -1) {
        int64_t c = nodes[node].column;
        node = next_node(nodes + node, slot[c] >= 0 ? source[c] : row[c],
                         categories);
    }
    return node;
}

/* The same for a group of one column, whose permuted value is `value`. */
static inline int64_t descend_one(const node_t *nodes,
                                  const uint32_t *categories, int64_t node,
                                  const float *row, int64_t column,
                                  float value)
{
    while (nodes[node].left != -1) {
        int64_t c = nodes[node].column;
        node = next_node(nodes + node, c == column ? value : row[c],
                         categories);
    }
    return node;
}

/*
 * Route rows X[rows[i]] (i < n_rows) through one tree (its categorical
 * nodes' sets in categories): leaves[i], and the
 * row's pairs, row after row, in buffer[i * width ...] with their columns
 * in buffer_columns and their number in row_counts[i] (width: at most the
 * tree's depth or the number of columns, whichever is smaller); counts[c]
 * (zeroed by the caller) is the number of rows whose path splits on c.
 * Returns 0, or -1 when out of memory.
 */
int route_rows(const node_t *nodes, const uint32_t *categories,
               const float *threshold32, const float *X,
               int64_t n_columns, const int64_t *rows, int64_t n_rows,
               int64_t width, int64_t *leaves, int64_t *counts,
               pair_t *buffer, int32_t *buffer_columns, int32_t *row_counts)
{
    int64_t *seen = malloc(n_columns * sizeof(int64_t));
    int64_t *slot = malloc(n_columns * sizeof(int64_t));
    if (seen == NULL || slot == NULL) {
        free(seen);
        free(slot);
        return -1;
    }
    for (int64_t c = 0; c < n_columns; c++) {
        seen[c] = -1;
    }
    for (int64_t i = 0; i < n_rows; i++) {
        const float *row = X + rows[i] * n_columns;
        pair_t *row_pairs = buffer + i * width;
        int32_t *row_columns = buffer_columns + i * width;
        int64_t n_used = 0;
        int64_t node = 0;
        while (nodes[node].left != -1) {
            int64_t c = nodes[node].column;
            float x = row[c];
            if (seen[c] != i) {
                seen[c] = i;
                slot[c] = n_used;
                pair_t pair = {(int32_t)i, (int32_t)node, -INFINITY, INFINITY};
                row_pairs[n_used] = pair;
                row_columns[n_used] = (int32_t)c;
                counts[c]++;
                n_used++;
            }
            pair_t *pair = row_pairs + slot[c];
            int64_t child = next_node(nodes + node, x, categories);
            if (isnan(x) || nodes[node].category_set >= 0) {
                pair->lower = INFINITY;
            } else if (child == nodes[node].left) {
                if (threshold32[node] < pair->upper) {
                    pair->upper = threshold32[node];
                }
            } else if (threshold32[node] > pair->lower) {
                pair->lower = threshold32[node];
            }
            node = child;
        }
        leaves[i] = node;
        row_counts[i] = (int32_t)n_used;
    }
    free(seen);
    free(slot);
    return 0;
}

/*
 * Store the pairs of route_rows column by column: pairs[ptr[c] ...] are
 * column c's, in row order (ptr: cumulative counts, length n_columns + 1).
 * Returns 0, or -1 when out of memory.
 */
int route_scatter(const pair_t *buffer, const int32_t *buffer_columns,
                  const int32_t *row_counts, int64_t n_rows, int64_t width,
                  int64_t n_columns, const int64_t *ptr, pair_t *pairs)
{
    int64_t *cursor = malloc(n_columns * sizeof(int64_t));
    if (cursor == NULL) {
        return -1;
    }
    memcpy(cursor, ptr, n_columns * sizeof(int64_t));
    for (int64_t i = 0; i < n_rows; i++) {
        for (int64_t s = 0; s < row_counts[i]; s++) {
            pairs[cursor[buffer_columns[i * width + s]]++] = buffer[i * width + s];
        }
    }
    free(cursor);
    return 0;
}

/*
 * One tree and its rows X[0], ..., X[n_rows - 1], routed by route_rows
 * (rows = 0, ..., n_rows - 1); for each of n_groups groups (group g's
 * columns are group_columns[group_ptr[g] ... group_ptr[g + 1])) and each of
 * n_repeats permutations (row r of sources, n_repeats x n_rows): the rows
 * that reach another leaf when the group's columns are read from
 * X[sources[r, i]], and those leaves. Writes the moved rows (indices i) and
 * their new leaves group after group, repeat after repeat, into moved and
 * new_leaves (room for n_groups * n_repeats * n_rows each) and how many for
 * each group and repeat into counts[g * n_repeats + r]; returns the total,
 * or -1 when out of memory.
 */
int64_t moved_leaves(const node_t *nodes, const uint32_t *categories,
                     const float *X, int64_t n_columns,
                     int64_t n_rows, const int64_t *sources,
                     int64_t n_repeats, const int64_t *ptr,
                     const pair_t *pairs, int64_t n_groups,
                     const int64_t *group_ptr, const int64_t *group_columns,
                     const int64_t *leaves, int64_t *moved,
                     int64_t *new_leaves, int64_t *counts)
{
    int64_t *stamp = malloc((n_rows > 0 ? n_rows : 1) * sizeof(int64_t));
    int32_t *slot = malloc((n_columns > 0 ? n_columns : 1) * sizeof(int32_t));
    if (stamp == NULL || slot == NULL) {
        free(stamp);
        free(slot);
        return -1;
    }
    for (int64_t i = 0; i < n_rows; i++) {
        stamp[i] = -1;
    }
    for (int64_t c = 0; c < n_columns; c++) {
        slot[c] = -1;
    }
    int64_t n_moved = 0;
    for (int64_t g = 0; g < n_groups; g++) {
        const int64_t *group = group_columns + group_ptr[g];
        int64_t n_group = group_ptr[g + 1] - group_ptr[g];
        for (int64_t j = 0; j < n_group; j++) {
            slot[group[j]] = (int32_t)j;
        }
        for (int64_t r = 0; r < n_repeats; r++) {
            const int64_t *source_rows = sources + r * n_rows;
            /* a row is re-routed once per group and repeat */
            int64_t mark = g * n_repeats + r;
            int64_t first = n_moved;
            for (int64_t j = 0; j < n_group; j++) {
                int64_t c = group[j];
                for (int64_t k = ptr[c]; k < ptr[c + 1]; k++) {
                    const pair_t *pair = pairs + k;
                    int64_t i = pair->row;
                    if (stamp[i] == mark) {
                        continue;
                    }
                    const float *source = X + source_rows[i] * n_columns;
                    float v = source[c];
                    if (v > pair->lower && v <= pair->upper) {
                        continue;
                    }
                    stamp[i] = mark;
                    int64_t leaf = descend_source(
                        nodes, categories, n_group == 1 ? pair->first_node : 0,
                        X + i * n_columns, slot, source);
                    if (leaf != leaves[i]) {
                        moved[n_moved] = i;
                        new_leaves[n_moved] = leaf;
                        n_moved++;
                    }
                }
            }
            counts[mark] = n_moved - first;
        }
        for (int64_t j = 0; j < n_group; j++) {
            slot[group[j]] = -1;
        }
    }
    free(stamp);
    free(slot);
    return n_moved;
}

/*
 * Every tree of an ensemble at once, for n_tasks tasks: task k replaces the
 * group group_columns[group_ptr[k] ... group_ptr[k + 1]) by the values
 * values[(group_ptr[k] + j) * n_positions + i] (column j of the group, row
 * position i: a permutation's values are the group's columns of the source
 * rows, gathered by the caller); add to
 * out[k * n_positions * n_outputs ...] (n_positions x n_outputs) the change
 * of each tree's leaf value on the rows that leave their path.
 *
 * Tree t's nodes start at node_offset[t] in the node arrays (category_set
 * indexing categories, shared by all trees); its table,
 * one row of n_outputs values per node, is at address tables[t]; its
 * routed rows start at
 * row_offset[t] in positions, leaves and the pairs' row indices, and
 * row_offset[n_trees] is the end; its pairs are at address tree_pairs[t],
 * column c's from ptr[t * (n_columns + 1) + c] on; positions[.] is a
 * row's index in out, X row chunk_start + position (n_positions of them).
 *
 * Trees are the outer loop and tasks the inner one, so that a tree's nodes
 * are read from memory once for all tasks rather than once per task.
 * Returns the number of moved (row, tree, task) triples, or -1 when out of
 * memory.
 */
int64_t add_moved_changes(int64_t n_trees, const int64_t *node_offset,
                          const node_t *nodes, const uint32_t *categories,
                          const uintptr_t *tables,
                          int64_t n_outputs, const int64_t *row_offset,
                          const int64_t *positions, const int64_t *leaves,
                          const int64_t *ptr, const uintptr_t *tree_pairs,
                          const float *X, int64_t n_columns,
                          int64_t chunk_start, int64_t n_positions,
                          int64_t n_tasks, const float *values,
                          const int64_t *group_ptr,
                          const int64_t *group_columns, double *out)
{
    int64_t widest = 1;
    for (int64_t t = 0; t < n_trees; t++) {
        int64_t n = row_offset[t + 1] - row_offset[t];
        if (n > widest) {
            widest = n;
        }
    }
    int64_t *stamp = malloc(widest * sizeof(int64_t));
    int32_t *slot = malloc((n_columns > 0 ? n_columns : 1) * sizeof(int32_t));
    if (stamp == NULL || slot == NULL) {
        free(stamp);
        free(slot);
        return -1;
    }
    for (int64_t c = 0; c < n_columns; c++) {
        slot[c] = -1;
    }
    for (int64_t i = 0; i < widest; i++) {
        stamp[i] = -1;
    }
    int64_t n_moved = 0;
    for (int64_t t = 0; t < n_trees; t++) {
        const node_t *tree = nodes + node_offset[t];
        const double *tree_table = (const double *)tables[t];
        const int64_t *tree_ptr = ptr + t * (n_columns + 1);
        const int64_t *tree_positions = positions + row_offset[t];
        const int64_t *tree_leaves = leaves + row_offset[t];
        const pair_t *pairs = (const pair_t *)tree_pairs[t];
        for (int64_t k = 0; k < n_tasks; k++) {
            int64_t first = group_ptr[k], n_group = group_ptr[k + 1] - first;
            if (n_group == 1) {
                /* consecutive tasks that replace this one column (its
                 * repeats) share one pass over its pairs; a row has one
                 * pair per column, so no stamp is needed */
                int64_t c = group_columns[first];
                int64_t end = k + 1;
                while (end < n_tasks && group_ptr[end + 1] - group_ptr[end] == 1 &&
                       group_columns[group_ptr[end]] == c) {
                    end++;
                }
                for (int64_t p = tree_ptr[c]; p < tree_ptr[c + 1]; p++) {
                    const pair_t *pair = pairs + p;
                    int64_t i = pair->row;
                    int64_t position = tree_positions[i];
                    float lower = pair->lower, upper = pair->upper;
                    for (int64_t r = k; r < end; r++) {
                        float v = values[group_ptr[r] * n_positions + position];
                        if (v > lower && v <= upper) {
                            continue;
                        }
                        int64_t leaf = descend_one(
                            tree, categories, pair->first_node,
                            X + (chunk_start + position) * n_columns, c, v);
                        int64_t old = tree_leaves[i];
                        if (leaf == old) {
                            continue;
                        }
                        n_moved++;
                        const double *gained = tree_table + leaf * n_outputs;
                        const double *lost = tree_table + old * n_outputs;
                        double *row_out =
                            out + (r * n_positions + position) * n_outputs;
                        for (int64_t o = 0; o < n_outputs; o++) {
                            row_out[o] += gained[o] - lost[o];
                        }
                    }
                }
                k = end - 1;
                continue;
            }
            const float *task_values = values + first * n_positions;
            double *task_out = out + k * n_positions * n_outputs;
            /* a row is re-routed once per tree and task, however many of
             * the group's columns its path splits on */
            int64_t mark = t * n_tasks + k;
            for (int64_t g = 0; g < n_group; g++) {
                slot[group_columns[first + g]] = (int32_t)g;
            }
            for (int64_t g = 0; g < n_group; g++) {
                const float *column_values = task_values + g * n_positions;
                int64_t c = group_columns[first + g];
                for (int64_t p = tree_ptr[c]; p < tree_ptr[c + 1]; p++) {
                    const pair_t *pair = pairs + p;
                    int64_t i = pair->row;
                    int64_t position = tree_positions[i];
                    float v = column_values[position];
                    if (stamp[i] == mark ||
                        (v > pair->lower && v <= pair->upper)) {
                        continue;
                    }
                    stamp[i] = mark;
                    int64_t leaf = descend(
                        tree, categories, n_group == 1 ? pair->first_node : 0,
                        X + (chunk_start + position) * n_columns, slot,
                        task_values, n_positions, position);
                    int64_t old = tree_leaves[i];
                    if (leaf == old) {
                        continue;
                    }
                    n_moved++;
                    const double *gained = tree_table + leaf * n_outputs;
                    const double *lost = tree_table + old * n_outputs;
                    double *row_out = task_out + position * n_outputs;
                    for (int64_t o = 0; o < n_outputs; o++) {
                        row_out[o] += gained[o] - lost[o];
                    }
                }
            }
            for (int64_t g = 0; g < n_group; g++) {
                slot[group_columns[first + g]] = -1;
            }
        }
    }
    free(stamp);
    free(slot);
    return n_moved;
}

/*
 * Add to out (n_positions x n_outputs) every tree's leaf values on its
 * routed rows (laid out as for add_moved_changes), tree after tree in
 * order, as the ensemble's own predict adds them.
 */
void add_leaf_values(int64_t n_trees, const uintptr_t *tables,
                     int64_t n_outputs,
                     const int64_t *row_offset, const int64_t *positions,
                     const int64_t *leaves, double *out)
{
    for (int64_t t = 0; t < n_trees; t++) {
        const double *tree_table = (const double *)tables[t];
        for (int64_t i = row_offset[t]; i < row_offset[t + 1]; i++) {
            const double *values = tree_table + leaves[i] * n_outputs;
            double *row_out = out + positions[i] * n_outputs;
            for (int64_t o = 0; o < n_outputs; o++) {
                row_out[o] += values[o];
            }
        }
    }
}

/*
 * Oblivious trees (every node of a level splits on the same column and
 * threshold with the same missing direction, as CatBoost grows them, or a
 * stump): tree t's levels, root first, are level_offset[t] ...
 * level_offset[t + 1] of level_column, level_threshold and
 * level_missing_left, and a row's leaf is the number whose bit d says that
 * the row goes right at level d (the same rule as next_node). Its table,
 * at address tables[t], holds one row of n_outputs values per such
 * number. No pair and no descent: a replaced column changes the bits of
 * its own levels only.
 */
static inline int32_t goes_right(float x, double threshold, uint8_t missing_left)
{
    /* without a branch: the rows' values are unpredictable */
    int32_t missing = x != x;
    return (missing & !missing_left) | (!missing & !((double)x <= threshold));
}

/* The leaf numbers of rows X[0], ..., X[n_rows - 1] in trees first_tree ...
 * last_tree - 1, in bits[t * n_rows + i]. */
void oblivious_leaves(int64_t first_tree, int64_t last_tree,
                      const int64_t *level_offset, const int32_t *level_column,
                      const double *level_threshold,
                      const uint8_t *level_missing_left, const float *X,
                      int64_t n_columns, int64_t n_rows, int32_t *bits)
{
    for (int64_t t = first_tree; t < last_tree; t++) {
        int64_t first = level_offset[t], depth = level_offset[t + 1] - first;
        int32_t *tree_bits = bits + t * n_rows;
        for (int64_t i = 0; i < n_rows; i++) {
            const float *row = X + i * n_columns;
            int32_t b = 0;
            for (int64_t d = 0; d < depth; d++) {
                b |= goes_right(row[level_column[first + d]],
                                level_threshold[first + d],
                                level_missing_left[first + d])
                     << d;
            }
            tree_bits[i] = b;
        }
    }
}

/* Add to out (n_rows x n_outputs) every tree's leaf values, tree after
 * tree in order, as add_leaf_values does. */
void oblivious_add_leaf_values(int64_t n_trees, const uintptr_t *tables,
                               int64_t n_outputs, const int32_t *bits,
                               int64_t n_rows, double *out)
{
    for (int64_t t = 0; t < n_trees; t++) {
        const double *table = (const double *)tables[t];
        const int32_t *tree_bits = bits + t * n_rows;
        for (int64_t i = 0; i < n_rows; i++) {
            const double *values = table + (int64_t)tree_bits[i] * n_outputs;
            double *row_out = out + i * n_outputs;
            for (int64_t o = 0; o < n_outputs; o++) {
                row_out[o] += values[o];
            }
        }
    }
}

/*
 * add_moved_changes for oblivious trees, on every row of a chunk (row i is
 * X row chunk_start + i and out's row i; n_rows of them): for each task k,
 * whose group group_columns[group_ptr[k] ... group_ptr[k + 1]) takes the
 * values values[(group_ptr[k] + j) * n_rows + i], add to
 * out[k * n_rows * n_outputs ...] each tree's change of leaf value on the
 * rows whose leaf changes, tree after tree in order (the same sums, in the
 * same order, as add_moved_changes). Returns the number of (row, tree,
 * task) triples that changed leaf, or -1 when out of memory.
 */
int64_t oblivious_changes(int64_t n_trees, const int64_t *level_offset,
                          const int32_t *level_column,
                          const double *level_threshold,
                          const uint8_t *level_missing_left,
                          const uintptr_t *tables, int64_t n_outputs,
                          const int32_t *bits, int64_t n_rows,
                          int64_t n_columns, int64_t n_tasks,
                          const float *values, const int64_t *group_ptr,
                          const int64_t *group_columns, double *out)
{
    int64_t deepest = 1;
    for (int64_t t = 0; t < n_trees; t++) {
        if (level_offset[t + 1] - level_offset[t] > deepest) {
            deepest = level_offset[t + 1] - level_offset[t];
        }
    }
    int32_t *slot = malloc((n_columns > 0 ? n_columns : 1) * sizeof(int32_t));
    int64_t *levels = malloc(deepest * sizeof(int64_t));
    const float **level_values = malloc(deepest * sizeof(float *));
    /* each leaf's change of value when one level's bit flips, for trees
     * whose leaves are few next to the rows (computing it costs a pass over
     * the leaves) */
    int64_t n_leaves = (int64_t)1 << deepest;
    int use_flipped = n_outputs == 1 && 4 * n_leaves <= n_rows;
    double *flipped = use_flipped ? malloc(n_leaves * sizeof(double)) : NULL;
    if (slot == NULL || levels == NULL || level_values == NULL ||
        (use_flipped && flipped == NULL)) {
        free(slot);
        free(levels);
        free(level_values);
        free(flipped);
        return -1;
    }
    for (int64_t c = 0; c < n_columns; c++) {
        slot[c] = -1;
    }
    int64_t n_moved = 0;
    for (int64_t t = 0; t < n_trees; t++) {
        int64_t first_level = level_offset[t];
        int64_t depth = level_offset[t + 1] - first_level;
        const double *table = (const double *)tables[t];
        const int32_t *tree_bits = bits + t * n_rows;
        for (int64_t k = 0; k < n_tasks; k++) {
            int64_t first = group_ptr[k], n_group = group_ptr[k + 1] - first;
            for (int64_t g = 0; g < n_group; g++) {
                slot[group_columns[first + g]] = (int32_t)g;
            }
            /* the tree's levels on the group's columns, and their values */
            int32_t mask = 0;
            int64_t n_levels = 0;
            for (int64_t d = 0; d < depth; d++) {
                int32_t g = slot[level_column[first_level + d]];
                if (g >= 0) {
                    mask |= (int32_t)1 << d;
                    levels[n_levels] = d;
                    level_values[n_levels] = values + (first + g) * n_rows;
                    n_levels++;
                }
            }
            for (int64_t g = 0; g < n_group; g++) {
                slot[group_columns[first + g]] = -1;
            }
            if (mask == 0) {
                continue;
            }
            double *task_out = out + k * n_rows * n_outputs;
            if (n_levels == 1 && n_outputs == 1) {
                /* the common case, one level on the group and one output,
                 * as a loop of a few instructions per row */
                int64_t d = levels[0];
                const float *column_values = level_values[0];
                double threshold = level_threshold[first_level + d];
                uint8_t missing_left = level_missing_left[first_level + d];
                if (flipped != NULL) {
                    /* table[leaf] - table[old] is flipped[old] when the bit
                     * changed and +0.0 when it did not; flipped[old] * 0.0
                     * is +-0.0, which leaves the sum as it was (it is never
                     * -0.0): the same sums, without a branch */
                    for (int64_t leaf = 0; leaf < ((int64_t)1 << depth); leaf++) {
                        flipped[leaf] = table[leaf ^ mask] - table[leaf];
                    }
                    for (int64_t i = 0; i < n_rows; i++) {
                        int32_t old = tree_bits[i];
                        int32_t moved =
                            ((old >> d) & 1) !=
                            goes_right(column_values[i], threshold, missing_left);
                        n_moved += moved;
                        task_out[i] += flipped[old] * (double)moved;
                    }
                    continue;
                }
                for (int64_t i = 0; i < n_rows; i++) {
                    int32_t old = tree_bits[i];
                    int32_t leaf =
                        (old & ~mask) |
                        (goes_right(column_values[i], threshold, missing_left) << d);
                    n_moved += leaf != old;
                    task_out[i] += table[leaf] - table[old];
                }
                continue;
            }
            for (int64_t i = 0; i < n_rows; i++) {
                int32_t old = tree_bits[i], leaf = old & ~mask;
                for (int64_t j = 0; j < n_levels; j++) {
                    int64_t d = levels[j];
                    leaf |= goes_right(level_values[j][i],
                                       level_threshold[first_level + d],
                                       level_missing_left[first_level + d])
                            << d;
                }
                /* added whether the leaf changed or not: without a branch,
                 * and gained - lost is +0.0 when it did not, which leaves
                 * the sum as it was (it starts at +0.0) */
                n_moved += leaf != old;
                const double *gained = table + (int64_t)leaf * n_outputs;
                const double *lost = table + (int64_t)old * n_outputs;
                double *row_out = task_out + i * n_outputs;
                for (int64_t o = 0; o < n_outputs; o++) {
                    row_out[o] += gained[o] - lost[o];
                }
            }
        }
    }
    free(slot);
    free(levels);
    free(level_values);
    free(flipped);
    return n_moved;
}

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_ckernels",
    "Compiled inner loops of the tree engine; called through ctypes.", -1,
    NULL};

PyMODINIT_FUNC PyInit__ckernels(void) { return PyModule_Create(&module); }
