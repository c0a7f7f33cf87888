/* max_key_angle on every fixture of every format: loaded with
 * max_key_angle=5, no two consecutive rotation keys of any channel are more
 * than 5 degrees apart (except the two keys of a step, ra_step_epsilon
 * apart), and the split keys play back the same motion as the default keys
 * (world matrices within 1e-4, relative above 1, at 241 times per
 * animation; Homeworld on its 1/60 s sampling grid, where both are the
 * curve).  Consumers that interpolate quaternion channels per component
 * (Blender) need this to play between keys what the game plays. */
#include <string.h>

#include "ra_fixture.h"

#define LIMIT_DEG 5.0
#define TOL 1e-4
#define TIMES 241

static long g_files, g_split_files, g_keys_default, g_keys_split;
static double g_worst_gap, g_worst_diff;

static ra_status load(const uint8_t *d, size_t n, const char *path, bool body, const char *mka, ra_document **doc)
{
    return fx_load_opt(d, n, path, body, mka ? "max_key_angle" : NULL, mka, doc, NULL);
}

static long rotation_keys(const ra_scene *s)
{
    long n = 0;
    for (size_t a = 0; a < s->animation_count; a++)
        for (size_t c = 0; c < s->animations[a].channel_count; c++)
            n += (long)s->animations[a].channels[c].rotation_count;
    return n;
}

static double rel_diff(const ra_mat4 *a, const ra_mat4 *b)
{
    double w = 0;
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 4; c++) {
            double d = fabs(a->m[r][c] - b->m[r][c]) / fmax(1.0, fabs(a->m[r][c]));
            if (!(d <= w)) w = d;
        }
    return w;
}

/* The widest rotation between two keys (degrees; a step's two keys aside), and its node. */
static double largest_gap(const ra_scene *s, const char **where)
{
    double worst = 0;
    for (size_t a = 0; a < s->animation_count; a++)
        for (size_t c = 0; c < s->animations[a].channel_count; c++) {
            const ra_channel *ch = &s->animations[a].channels[c];
            for (size_t k = 1; k < ch->rotation_count; k++) {
                double t0 = ch->rotation[k - 1].t, t1 = ch->rotation[k].t;
                if (t1 - t0 <= 2 * ra_step_epsilon(t1)) continue; /* a step */
                double g = ra_q_angle_between(ch->rotation[k - 1].q, ch->rotation[k].q) * 180 / RA_PI;
                if (g > worst) worst = g, *where = s->nodes[ch->node].name;
            }
        }
    return worst;
}

/* How far two scenes of the same nodes play apart (TIMES instants per animation). */
static double motion_diff(const ra_scene *s0, const ra_scene *s, bool grid, ra_mat4 *w0, ra_mat4 *w1)
{
    double diff = 0;
    for (size_t a = 0; a < s->animation_count && s->node_count == s0->node_count; a++) {
        double dur = s->animations[a].duration;
        for (int i = 0; i < TIMES; i++) {
            double t = dur * i / (TIMES - 1);
            if (grid) t = fmin(dur, round(t * 60) / 60);
            ra_scene_sample_world(s0, a, t, w0);
            ra_scene_sample_world(s, a, t, w1);
            for (size_t nd = 0; nd < s->node_count; nd++) {
                double dd = rel_diff(&w0[nd], &w1[nd]);
                if (!(dd <= diff)) diff = dd;
            }
        }
    }
    return diff;
}

static void check_file(const uint8_t *d, size_t n, const char *path, const char *nm, bool body)
{
    ra_document *def = NULL, *spl = NULL, *aut = NULL;
    /* the baseline: the bakers' own widest gap (150 degrees) */
    if (load(d, n, path, body, "150", &def) != RA_OK) return; /* the refused fixtures */
    char lim[32];
    snprintf(lim, sizeof lim, "%g", LIMIT_DEG);
    ra_status st = load(d, n, path, body, lim, &spl);
    CHECK(st == RA_OK, "%s: loads by default, not with max_key_angle=%s", nm, lim);
    if (st != RA_OK) {
        ra_document_free(def);
        return;
    }
    g_files++;
    const ra_scene *s = &spl->scene, *s0 = &def->scene;
    CHECK(s->animation_count == s0->animation_count && s->node_count == s0->node_count, "%s: scene shape", nm);
    /* the gaps */
    const char *where = "";
    double worst = largest_gap(s, &where);
    CHECK(worst <= LIMIT_DEG + 1e-6, "%s: rotation keys %.3f degrees apart on %s (max_key_angle=%g)", nm, worst, where,
          LIMIT_DEG);
    if (worst > g_worst_gap) g_worst_gap = worst;
    long k0 = rotation_keys(s0), k1 = rotation_keys(s);
    CHECK(k1 >= k0, "%s: %ld rotation keys split, %ld by default", nm, k1, k0);
    g_keys_default += k0;
    g_keys_split += k1;
    if (k1 > k0) g_split_files++;
    /* the same motion */
    bool grid = !strcmp(def->format->id, "homeworld_mad");
    ra_mat4 *w0 = malloc(s->node_count * sizeof *w0), *w1 = malloc(s->node_count * sizeof *w1);
    double diff = motion_diff(s0, s, grid, w0, w1);
    CHECK(diff <= TOL, "%s: split and default keys play %g apart", nm, diff);
    if (diff > g_worst_diff) g_worst_diff = diff;
    /* without max_key_angle: no two rotation keys (but a step's) further apart than the
     * automatic bound, and the same motion as the sparse keys */
    st = load(d, n, path, body, NULL, &aut);
    CHECK(st == RA_OK, "%s: loads without max_key_angle", nm);
    if (st == RA_OK) {
        const ra_scene *sa = &aut->scene;
        const char *where_auto = "";
        double bound = ra_scene_auto_key_angle(s0) * 180 / RA_PI, gap = largest_gap(sa, &where_auto);
        CHECK(bound > 0.09 && bound < 11 && gap <= bound + 1e-6,
              "%s: automatic key angle %g deg, largest gap %g deg on %s", nm, bound, gap, where_auto);
        double adiff = motion_diff(s0, sa, grid, w0, w1);
        CHECK(adiff <= TOL, "%s: automatic and sparse keys play %g apart", nm, adiff);
        printf("%-28s automatic key angle %.3f deg: rotation keys %6ld -> %6ld\n", nm, bound, k0, rotation_keys(sa));
        ra_document_free(aut);
    }
    printf("%-28s rotation keys %6ld -> %6ld, largest gap %7.3f deg, motion differs by %.2e\n", nm, k0, k1, worst,
           diff);
    free(w0);
    free(w1);
    ra_document_free(def);
    ra_document_free(spl);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_split FIXTURE_DIR...\n");
        return 2;
    }
    fx_for_each_fixture(argc - 1, argv + 1, check_file);
    /* the limit must have had work to do: fixtures with arcs above it */
    CHECK(g_split_files >= 5, "only %ld fixtures gained keys", g_split_files);
    printf("fixtures: %ld loaded, %ld split; rotation keys %ld -> %ld; largest gap %.3f deg; worst motion difference "
           "%.2e\n",
           g_files, g_split_files, g_keys_default, g_keys_split, g_worst_gap, g_worst_diff);
    return ra_test_finish("test_split");
}
