/* SCOUT's action-feature matrix and observation vector in C: the same numbers as the Python of
 * action_features._scout_matrix and features.scout_features (every value computed in double and stored as
 * float32, as numpy's cast does), for the environments' per-decision path. Optional: without a compiler the
 * package installs without it and referee/games/rl/fast.py falls back to the Python.
 * tests/games/test_rl_fast.py checks both give the same arrays at every decision of many games. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <string.h>

#define LONGEST 10
#define MOST_VALUE 10.0
#define GAP (-100)
#define WIDTH 19
#define MAX_CARDS 64
#define PER_SEAT 7

static int read_numbers(PyObject *cards, int *tops, int *bottoms, Py_ssize_t *count) {
    if (!PyList_Check(cards)) {
        PyErr_SetString(PyExc_TypeError, "cards must be a list");
        return -1;
    }
    Py_ssize_t size = PyList_GET_SIZE(cards);
    if (size > MAX_CARDS) {
        PyErr_SetString(PyExc_ValueError, "too many cards");
        return -1;
    }
    for (Py_ssize_t i = 0; i < size; i++) {
        PyObject *card = PyList_GET_ITEM(cards, i);
        PyObject *top, *bottom;
        if (PyList_Check(card) && PyList_GET_SIZE(card) == 2) {
            top = PyList_GET_ITEM(card, 0);
            bottom = PyList_GET_ITEM(card, 1);
        } else if (PyTuple_Check(card) && PyTuple_GET_SIZE(card) == 2) {
            top = PyTuple_GET_ITEM(card, 0);
            bottom = PyTuple_GET_ITEM(card, 1);
        } else {
            PyErr_SetString(PyExc_TypeError, "a card is a pair of numbers");
            return -1;
        }
        long t = PyLong_AsLong(top), b = PyLong_AsLong(bottom);
        if ((t == -1 || b == -1) && PyErr_Occurred()) return -1;
        if (t < 1 || t > 10 || b < 1 || b > 10) {
            PyErr_SetString(PyExc_ValueError, "a card's numbers lie in 1..10");
            return -1;
        }
        tops[i] = (int)t;
        if (bottoms) bottoms[i] = (int)b;
    }
    *count = size;
    return 0;
}

static int max3(int a, int b, int c) {
    int m = a > b ? a : b;
    return m > c ? m : c;
}

/* scout_matrix(hand, active_set, indices, cap, out): out (float32, len(indices) x WIDTH, C-contiguous) gets
 * one row per codec index of `indices`. */
static PyObject *scout_matrix(PyObject *self, PyObject *args) {
    PyObject *hand, *active, *indices;
    int cap;
    Py_buffer out;
    if (!PyArg_ParseTuple(args, "OOOiw*", &hand, &active, &indices, &cap, &out)) return NULL;
    PyObject *result = NULL;
    int tops[MAX_CARDS], atops[MAX_CARDS], abottoms[MAX_CARDS];
    Py_ssize_t size, held;
    if (read_numbers(hand, tops, NULL, &size) < 0 || read_numbers(active, atops, abottoms, &held) < 0) goto done;
    if (!PyList_Check(indices)) {
        PyErr_SetString(PyExc_TypeError, "indices must be a list");
        goto done;
    }
    Py_ssize_t rows = PyList_GET_SIZE(indices);
    if (cap < 1 || cap > MAX_CARDS || out.len != (Py_ssize_t)(rows * WIDTH * sizeof(float))) {
        PyErr_SetString(PyExc_ValueError, "out must hold len(indices) x 19 float32");
        goto done;
    }
    int padded[MAX_CARDS + 2];
    padded[0] = GAP;
    padded[size + 1] = GAP;
    for (Py_ssize_t i = 0; i < size; i++) padded[i + 1] = tops[i];
    int ending[3][MAX_CARDS + 2], starting[3][MAX_CARDS + 2], before[MAX_CARDS + 1], after[MAX_CARDS + 1];
    memset(ending, 0, sizeof ending);
    memset(starting, 0, sizeof starting);
    before[0] = 0;
    for (Py_ssize_t i = 1; i <= size; i++) {
        int step = padded[i] - padded[i - 1];
        for (int k = 0; k < 3; k++) ending[k][i] = step == k - 1 ? ending[k][i - 1] + 1 : 1;
        int here = max3(ending[0][i], ending[1][i], ending[2][i]);
        before[i] = before[i - 1] > here ? before[i - 1] : here;
    }
    after[size] = 0;
    for (Py_ssize_t i = size; i >= 1; i--) {
        int step = padded[i + 1] - padded[i];
        for (int k = 0; k < 3; k++) starting[k][i] = step == k - 1 ? starting[k][i + 1] + 1 : 1;
        int here = max3(starting[0][i], starting[1][i], starting[2][i]);
        after[i - 1] = after[i] > here ? after[i] : here;
    }
    long shows_end = 2 + (long)cap * LONGEST;
    double shown_before = (double)held / LONGEST;
    double active_after = (double)(held - 1) / LONGEST;
    double scouted_hand = (double)(size + 1) / cap;
    float *row = (float *)out.buf;
    memset(row, 0, (size_t)out.len);
    for (Py_ssize_t r = 0; r < rows; r++, row += WIDTH) {
        long index = PyLong_AsLong(PyList_GET_ITEM(indices, r));
        if (index == -1 && PyErr_Occurred()) goto done;
        if (index < 0) {
            PyErr_SetString(PyExc_ValueError, "an index is not negative");
            goto done;
        }
        if (index < 2) {
            row[0] = 1.0f;
            row[4] = (float)index;
        } else if (index < shows_end) {
            long start = (index - 2) / LONGEST, length = (index - 2) % LONGEST + 1, end = start + length;
            if (end > size) {
                PyErr_SetString(PyExc_ValueError, "a Show beyond the hand");
                goto done;
            }
            int first = padded[start + 1], last = padded[end];
            int match = length > 1 && first == padded[start + 2];
            int best = before[start] > after[end] ? before[start] : after[end];
            int step = padded[end + 1] - padded[start];
            if (step >= -1 && step <= 1) {
                int joined = ending[step + 1][start] + starting[step + 1][end + 1];
                if (joined > best) best = joined;
            }
            row[1] = 1.0f;
            row[5] = (float)((double)length / LONGEST);
            row[6] = (float)match;
            row[7] = (float)(length > 1 && !match);
            row[8] = (float)((first < last ? first : last) / MOST_VALUE);
            row[9] = (float)shown_before;
            row[10] = (float)((double)(size - length) / cap);
            row[11] = (float)(length == size);
            row[17] = (float)((double)length / LONGEST);
            row[18] = (float)((double)best / LONGEST);
        } else {
            long slot = (index - shows_end) / (cap + 1), at = (index - shows_end) % (cap + 1);
            int and_show = slot & 1, flip = (slot >> 1) & 1, right = (int)(slot >> 2);
            if (slot > 7 || at > size || held < 1) {
                PyErr_SetString(PyExc_ValueError, "a Scout beyond the hand or the Active Set");
                goto done;
            }
            Py_ssize_t taken = right ? held - 1 : 0;
            int top = flip ? abottoms[taken] : atops[taken];
            int left_number = padded[at], right_number = padded[at + 1];
            int joins = top - left_number, follows = right_number - top;
            int left = joins >= -1 && joins <= 1 ? ending[joins + 1][at] : 0;
            int following = follows >= -1 && follows <= 1 ? starting[follows + 1][at + 1] : 0;
            int longest = 1 + (joins == follows ? left + following : (left > following ? left : following));
            int best = before[at] > after[at] ? before[at] : after[at];
            if (longest > best) best = longest;
            row[2] = (float)!and_show;
            row[3] = (float)and_show;
            row[4] = (float)flip;
            row[10] = (float)scouted_hand;
            row[12] = (float)(top / MOST_VALUE);
            row[13] = size ? (float)((double)at / size) : 0.0f;
            row[14] = (float)right;
            row[15] = (float)(top == left_number || top == right_number);
            row[16] = (float)(abs(top - left_number) == 1 || abs(top - right_number) == 1);
            row[17] = (float)active_after;
            row[18] = (float)((double)best / LONGEST);
        }
    }
    result = Py_None;
    Py_INCREF(result);
done:
    PyBuffer_Release(&out);
    return result;
}

static int cards_into(float *out, PyObject *cards, int compact, Py_ssize_t limit) {
    int tops[MAX_CARDS], bottoms[MAX_CARDS];
    Py_ssize_t count;
    if (read_numbers(cards, tops, bottoms, &count) < 0) return -1;
    if (count > limit) {
        PyErr_SetString(PyExc_ValueError, "more cards than the slots");
        return -1;
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        if (compact) {
            out[2 * i] = (float)(tops[i] / 10.0);
            out[2 * i + 1] = (float)(bottoms[i] / 10.0);
        } else {
            out[20 * i + tops[i] - 1] = 1.0f;
            out[20 * i + 10 + bottoms[i] - 1] = 1.0f;
        }
    }
    return 0;
}

static PyObject *item(PyObject *observation, const char *key) {
    PyObject *value = PyDict_GetItemString(observation, key);
    if (!value) PyErr_Format(PyExc_KeyError, "the observation has no %s", key);
    return value;
}

static int long_at(PyObject *list, Py_ssize_t index, long *value) {
    if (!PyList_Check(list) || index >= PyList_GET_SIZE(list)) {
        PyErr_SetString(PyExc_ValueError, "a per-seat list is too short");
        return -1;
    }
    *value = PyLong_AsLong(PyList_GET_ITEM(list, index));
    return (*value == -1 && PyErr_Occurred()) ? -1 : 0;
}

static int long_of(PyObject *observation, const char *key, long *value) {
    PyObject *object = item(observation, key);
    if (!object) return -1;
    *value = PyLong_AsLong(object);
    return (*value == -1 && PyErr_Occurred()) ? -1 : 0;
}

/* scout_vector(observation, cap, compact, out): out (float32 zeros of features.scout_size) gets the vector. */
static PyObject *scout_vector(PyObject *self, PyObject *args) {
    PyObject *observation;
    int cap, compact;
    Py_buffer out;
    if (!PyArg_ParseTuple(args, "O!ipw*", &PyDict_Type, &observation, &cap, &compact, &out)) return NULL;
    PyObject *result = NULL;
    float *vector = (float *)out.buf;
    long players, seat, owner, must_show, round, rounds, starter;
    if (long_of(observation, "players", &players) < 0 || long_of(observation, "seat", &seat) < 0 ||
        long_of(observation, "must_show", &must_show) < 0 ||
        long_of(observation, "round", &round) < 0 || long_of(observation, "rounds", &rounds) < 0 ||
        long_of(observation, "round_starter", &starter) < 0)
        goto done;
    PyObject *owned = item(observation, "active_owner");
    if (!owned) goto done;
    owner = -1;
    if (owned != Py_None && (owner = PyLong_AsLong(owned)) == -1 && PyErr_Occurred()) goto done;
    int per_card = compact ? 2 : 20;
    Py_ssize_t offset = (Py_ssize_t)(cap + LONGEST) * per_card;
    Py_ssize_t needed = offset + PER_SEAT * players + 5 + players;
    if (players < 2 || players > 8 || cap < 1 || cap > MAX_CARDS || seat < 0 || seat >= players ||
        out.len != (Py_ssize_t)(needed * sizeof(float)) || rounds < 1) {
        PyErr_SetString(PyExc_ValueError, "out does not fit the observation");
        goto done;
    }
    memset(vector, 0, (size_t)out.len);
    PyObject *hand = item(observation, "hand"), *active = item(observation, "active_set");
    if (!hand || !active || cards_into(vector, hand, compact, cap) < 0 ||
        cards_into(vector + cap * per_card, active, compact, LONGEST) < 0)
        goto done;
    PyObject *to_move = item(observation, "to_move"), *sizes = item(observation, "hand_sizes");
    PyObject *captured = item(observation, "captured"), *chips = item(observation, "chips");
    PyObject *used = item(observation, "scout_show_used"), *scores = item(observation, "scores");
    PyObject *phase = item(observation, "phase");
    if (!to_move || !sizes || !captured || !chips || !used || !scores || !phase) goto done;
    if (!PyList_Check(to_move)) {
        PyErr_SetString(PyExc_TypeError, "to_move must be a list");
        goto done;
    }
    float *seats = vector + offset;
    for (long relative = 0; relative < players; relative++, seats += PER_SEAT) {
        long other = (seat + relative) % players, value;
        if (long_at(sizes, other, &value) < 0) goto done;
        seats[0] = (float)((double)value / cap);
        if (long_at(captured, other, &value) < 0) goto done;
        seats[1] = (float)((double)value / 45);
        if (long_at(chips, other, &value) < 0) goto done;
        double chip = (double)value / 10;
        seats[2] = (float)(chip < 1.0 ? chip : 1.0);
        if (long_at(used, other, &value) < 0) goto done;
        seats[3] = (float)value;
        if (long_at(scores, other, &value) < 0) goto done;
        double score = (double)value / 50;
        score = score < 1.0 ? score : 1.0;
        seats[4] = (float)(score > -1.0 ? score : -1.0);
        seats[5] = (float)(other == owner);
        int moving = 0;
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(to_move); i++) {
            long mover = PyLong_AsLong(PyList_GET_ITEM(to_move, i));
            if (mover == -1 && PyErr_Occurred()) goto done;
            moving |= mover == other;
        }
        seats[6] = (float)moving;
    }
    offset += PER_SEAT * players;
    const char *phases[] = {"orient", "play", "over"};
    int found = 0;
    for (int i = 0; i < 3; i++) {
        if (PyUnicode_Check(phase) && PyUnicode_CompareWithASCIIString(phase, phases[i]) == 0) {
            vector[offset + i] = 1.0f;
            found = 1;
        }
    }
    if (!found) {
        PyErr_SetString(PyExc_ValueError, "unknown phase");
        goto done;
    }
    vector[offset + 3] = (float)must_show;
    vector[offset + 4] = (float)((double)round / rounds);
    vector[offset + 5 + ((starter - seat) % players + players) % players] = 1.0f;
    result = Py_None;
    Py_INCREF(result);
done:
    PyBuffer_Release(&out);
    return result;
}

/* indexed(legal, memo): codec.indexed_legal's table {index: action} of the sequence `legal`, each index read
 * from `memo` ({id(action): (action, index)}), or None if one is not remembered there (or is another object). */
static PyObject *indexed(PyObject *self, PyObject *args) {
    PyObject *legal, *memo;
    if (!PyArg_ParseTuple(args, "OO!", &legal, &PyDict_Type, &memo)) return NULL;
    PyObject *items = PySequence_Fast(legal, "legal must be a sequence");
    if (!items) return NULL;
    PyObject *table = PyDict_New();
    if (!table) goto fail;
    Py_ssize_t count = PySequence_Fast_GET_SIZE(items);
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *action = PySequence_Fast_GET_ITEM(items, i);
        PyObject *key = PyLong_FromVoidPtr(action);
        if (!key) goto fail;
        PyObject *known = PyDict_GetItemWithError(memo, key);
        Py_DECREF(key);
        if (!known) {
            if (PyErr_Occurred()) goto fail;
            Py_DECREF(table);
            Py_DECREF(items);
            Py_RETURN_NONE;
        }
        if (!PyTuple_Check(known) || PyTuple_GET_SIZE(known) != 2 || PyTuple_GET_ITEM(known, 0) != action) {
            Py_DECREF(table);
            Py_DECREF(items);
            Py_RETURN_NONE;
        }
        if (PyDict_SetItem(table, PyTuple_GET_ITEM(known, 1), action) < 0) goto fail;
    }
    Py_DECREF(items);
    return table;
fail:
    Py_XDECREF(table);
    Py_DECREF(items);
    return NULL;
}

/* as_list(vector): a float32 vector as a list of floats, equal to vector.tolist(), every +0.0 one shared
 * float object (an observation tensor is mostly zeros; pyspiel hands tensors out as lists). */
static PyObject *as_list(PyObject *self, PyObject *args) {
    Py_buffer in;
    if (!PyArg_ParseTuple(args, "y*", &in)) return NULL;
    PyObject *list = NULL, *zero = NULL;
    if (in.len % sizeof(float)) {
        PyErr_SetString(PyExc_ValueError, "a float32 buffer");
        goto done;
    }
    Py_ssize_t count = in.len / (Py_ssize_t)sizeof(float);
    const float *values = (const float *)in.buf;
    zero = PyFloat_FromDouble(0.0);
    list = zero ? PyList_New(count) : NULL;
    if (!list) goto done;
    for (Py_ssize_t i = 0; i < count; i++) {
        float value = values[i];
        PyObject *item;
        if (value == 0.0f && !signbit(value)) {
            Py_INCREF(zero);
            item = zero;
        } else if (!(item = PyFloat_FromDouble((double)value))) {
            Py_CLEAR(list);
            goto done;
        }
        PyList_SET_ITEM(list, i, item);
    }
done:
    Py_XDECREF(zero);
    PyBuffer_Release(&in);
    return list;
}

static PyMethodDef methods[] = {
    {"as_list", as_list, METH_VARARGS, "A float32 vector as a list of floats (vector.tolist())."},
    {"indexed", indexed, METH_VARARGS, "codec.indexed_legal's table from its memo, or None on a miss."},
    {"scout_matrix", scout_matrix, METH_VARARGS, "SCOUT's action-feature rows of the given codec indices."},
    {"scout_vector", scout_vector, METH_VARARGS, "SCOUT's observation vector (features.scout_features)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_fastscout", NULL, -1, methods};

PyMODINIT_FUNC PyInit__fastscout(void) { return PyModule_Create(&module); }
