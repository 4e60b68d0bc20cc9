/* The two C steps of review/evaluation/redundancy.py; compiled on first use by native.py
 * and called through ctypes (which releases the GIL). No Python API.
 *
 * qgram_chain_bound: an upper bound on the q-gram chain of two inputs. Each input is given
 * as its q-gram windows grouped by code: `codes` (distinct, ascending), `starts` (codes + 1
 * offsets into `pos`) and `pos` (window start positions, ascending within one code). A match is a pair (i, j) of windows with the same code and
 * lo <= j - i <= hi. A chain is a set of matches strictly increasing in both i and j.
 *
 * The bound: matches are counted per tile of 2^tile_bits x 2^tile_bits positions; a chain
 * crosses the tiles in a monotone staircase and uses at most min(count, tile) matches of
 * each tile (distinct i), so the best staircase sum bounds every chain. Returns that sum, -1 when
 * there are more than max_matches matches (too dense to be worth it), -2 when memory
 * runs out.
 *
 * lcs_at_least: whether LCS(x, y) >= cutoff, by the bit-parallel LCS row update
 * (V' = (V + (V & M)) | (V & ~M), a zero bit of V marks a column where the row's LCS
 * grows) over the 64-bit words of x, restricted to the words where a path reaching the
 * cutoff can still be:
 *  - on the right, column k is only reachable by such a path after k - (n - cutoff) rows
 *    (a path has at most n - cutoff columns without a match), as in rapidfuzz's band;
 *  - on the left, a word is dropped for good once every cell (r, k) in it has
 *    D(r, k) + min(n - k, rows left) < cutoff, and words left of a dropped word are
 *    dropped too; when no word is left, the answer is no.
 * Dropped words keep their last values and the first kept word gets no carry, which is the
 * same DP with stale (never larger) values on its left edge: no value is ever too large, and
 * the cells of an optimal path that reaches the cutoff are never dropped, so they are exact.
 * Returns a number that is >= cutoff exactly when LCS(x, y) >= cutoff (for cutoff > 0 it is
 * then the LCS); -2 when memory runs out (or would take over 256 MB).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int64_t qgram_chain_bound(const uint64_t *codes_a, const int32_t *starts_a, const int32_t *pos_a,
                          int64_t distinct_a, int64_t windows_a,
                          const uint64_t *codes_b, const int32_t *starts_b, const int32_t *pos_b,
                          int64_t distinct_b, int64_t windows_b,
                          int64_t lo, int64_t hi, int64_t tile_bits, int64_t max_matches)
{
    if (windows_a <= 0 || windows_b <= 0 || hi < lo)
        return 0;
    if (tile_bits < 0 || tile_bits > 8)
        return -2;
    const int64_t tile = INT64_C(1) << tile_bits;
    /* Cells are bytes that count up to `full`; a full cell stands for `tile` in the sum. */
    const int full = tile < 255 ? (int)tile : 255;
    int64_t rows = (windows_a - 1) / tile + 1, cols = (windows_b - 1) / tile + 1;
    /* Row s holds the tiles t with tlo(s) <= t <= thi(s), at most `width` of them; a cell
       counts the matches of its tile up to `tile` (no chain uses more of one tile). */
    int64_t width = (hi - lo + 2 * tile) / tile + 2;
    uint8_t *cell = calloc((size_t)(rows * width), sizeof *cell);
    int64_t *best = calloc((size_t)cols, sizeof *best);
    if (!cell || !best) {
        free(cell);
        free(best);
        return -2;
    }
    /* The codes of both inputs, merged without data-dependent branches. */
    int64_t most = distinct_a < distinct_b ? distinct_a : distinct_b, common = 0;
    int32_t *pair = malloc((size_t)(2 * most + 2) * sizeof *pair);
    if (!pair) {
        free(cell);
        free(best);
        return -2;
    }
    for (int64_t x = 0, y = 0; x < distinct_a && y < distinct_b;) {
        uint64_t u = codes_a[x], v = codes_b[y];
        pair[2 * common] = (int32_t)x;
        pair[2 * common + 1] = (int32_t)y;
        common += u == v;
        x += u <= v;
        y += v <= u;
    }
    int64_t matches = 0;
    for (int64_t c = 0; c < common; c++) {
        int64_t x = pair[2 * c], y = pair[2 * c + 1];
        int64_t first = starts_b[y], end = starts_b[y + 1];
        for (int64_t k = starts_a[x]; k < starts_a[x + 1]; k++) {
            int64_t i = pos_a[k];
            while (first < end && pos_b[first] < i + lo)
                first++;
            int64_t s = i >> tile_bits, floor_j = s * tile + lo;
            uint8_t *row = cell + s * width - ((floor_j > 0 ? floor_j : 0) >> tile_bits);
            for (int64_t r = first; r < end; r++) {
                int64_t j = pos_b[r];
                if (j > i + hi)
                    break;
                row[j >> tile_bits] += row[j >> tile_bits] < full;
                matches++;
            }
            if (matches > max_matches) {
                free(pair);
                free(cell);
                free(best);
                return -1;
            }
        }
    }
    free(pair);
    /* best[t]: the largest staircase sum ending in tile (s, t), rows done so far. */
    int64_t last_hi = -1;
    for (int64_t s = 0; s < rows; s++) {
        int64_t floor_j = s * tile + lo, top = s * tile + tile - 1 + hi;
        if (top > windows_b - 1)
            top = windows_b - 1;
        if (top < 0 || top < floor_j)
            continue;
        int64_t tlo = (floor_j > 0 ? floor_j : 0) / tile, thi = top / tile;
        /* Tiles right of the previous row's band hold no match: their sums equal its last. */
        int64_t beyond = last_hi >= 0 ? best[last_hi] : 0, run = 0;
        const uint8_t *row = cell + s * width - tlo;
        for (int64_t t = tlo; t <= thi; t++) {
            int64_t up = t <= last_hi ? best[t] : beyond;
            run = (up > run ? up : run) + (row[t] < full ? row[t] : tile);
            best[t] = run;
        }
        last_hi = thi;
    }
    int64_t bound = last_hi >= 0 ? best[last_hi] : 0;
    free(cell);
    free(best);
    return bound;
}

static int64_t zeros(uint64_t word, uint64_t valid)
{
    return (int64_t)__builtin_popcountll(~word & valid);
}

int64_t lcs_at_least(const uint8_t *x, int64_t n, const uint8_t *y, int64_t m, int64_t cutoff)
{
    if (cutoff <= 0)
        return 0;
    if (cutoff > n || cutoff > m)
        return 0;
    int64_t words = (n + 63) / 64;
    int16_t symbol[256];
    int64_t symbols = 0;
    memset(symbol, 0xff, sizeof symbol);
    for (int64_t i = 0; i < n; i++)
        if (symbol[x[i]] < 0)
            symbol[x[i]] = (int16_t)symbols++;
    if (symbols * words > (INT64_C(1) << 25))
        return -2; /* over 256 MB of match masks: let the caller use rapidfuzz */
    uint64_t *match = calloc((size_t)(symbols * words), sizeof *match);
    uint64_t *v = malloc((size_t)words * sizeof *v);
    if (!match || !v) {
        free(match);
        free(v);
        return -2;
    }
    for (int64_t i = 0; i < n; i++)
        match[symbol[x[i]] * words + i / 64] |= UINT64_C(1) << (i % 64);
    memset(v, 0xff, (size_t)words * sizeof *v);
    uint64_t last_valid = n % 64 ? (UINT64_C(1) << (n % 64)) - 1 : ~UINT64_C(0);
    int64_t first = 0, frozen = 0, slack = n - cutoff, result = -1;
    for (int64_t r = 0; r < m; r++) {
        int64_t last = (r + slack) / 64 + 1;
        if (last > words)
            last = words;
        if (symbol[y[r]] >= 0) {
            const uint64_t *mask = match + symbol[y[r]] * words;
            uint64_t carry = 0;
            for (int64_t w = first; w < last; w++) {
                uint64_t old = v[w], u = old & mask[w];
                uint64_t sum = old + u;
                uint64_t out = sum < old;
                sum += carry;
                out |= sum < carry;
                v[w] = sum | (old - u);
                carry = out;
            }
        }
        /* Drop dead words from the left: D(r, k) <= zeros up to the word's end, and
           min(n - k, rows left) <= min(n - the word's first column, rows left). */
        int64_t rows_left = m - r - 1;
        while (first < last) {
            int64_t here = frozen + zeros(v[first], first == words - 1 ? last_valid : ~UINT64_C(0));
            int64_t rest = n - 64 * first < rows_left ? n - 64 * first : rows_left;
            if (here + rest >= cutoff)
                break;
            frozen = here;
            first++;
        }
        if (first >= last) {
            result = 0;
            break;
        }
    }
    if (result < 0) {
        result = 0;
        for (int64_t w = 0; w < words; w++)
            result += zeros(v[w], w == words - 1 ? last_valid : ~UINT64_C(0));
    }
    free(match);
    free(v);
    return result;
}
