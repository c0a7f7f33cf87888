/* ra_document_check_scene (the load's scene check, its channels' keys checked
 * on the load's threads first) against ra_scene_check (one thread, channel
 * by channel) on every fixture loaded with threads=2: both accept the scene
 * as loaded; then one channel at a time (the first, one in the middle, the
 * last) gets a bad key, a position that is not finite, a rotation that is
 * not a unit quaternion, a rotation key time equal to the one before, and
 * both must refuse it with the same status and message; with the first and
 * the last channel both bad, both must name the first.  The key is put back
 * after each case.  At least 20 fixtures must have scenes of two channels or
 * more (the parallel pass runs only then). */
#include <math.h>
#include <string.h>

#include "ra_fixture.h"

static long g_files, g_parallel, g_cases;

static ra_channel *channel_at(ra_scene *s, size_t want)
{
    for (size_t a = 0, i = 0; a < s->animation_count; a++)
        for (size_t c = 0; c < s->animations[a].channel_count; c++, i++)
            if (i == want) return &s->animations[a].channels[c];
    return NULL;
}

/* both checks give the same answer; ok: that it is RA_OK */
static void compare(ra_document *doc, const char *nm, const char *what, bool ok)
{
    ra_error es, ep;
    ra_status ss = ra_scene_check(&doc->scene, &es), sp = ra_document_check_scene(doc, &ep);
    g_cases++;
    CHECK(ss == sp, "%s, %s: one thread %d, parallel %d", nm, what, (int)ss, (int)sp);
    CHECK((ss == RA_OK) == ok, "%s, %s: scene check %s (%s)", nm, what, ss == RA_OK ? "passed" : "failed", es.msg);
    if (ss != RA_OK && sp != RA_OK)
        CHECK(strcmp(es.msg, ep.msg) == 0, "%s, %s: one thread \"%s\", parallel \"%s\"", nm, what, es.msg, ep.msg);
}

/* a bad key of kind k in channel ch (false: it has no key of that kind) */
static bool spoil(ra_channel *ch, int k)
{
    if (k == 0 && ch->position_count) ch->position[ch->position_count - 1].v.y = NAN;
    else if (k == 1 && ch->rotation_count) ch->rotation[0].q.w *= 2;
    else if (k == 2 && ch->rotation_count > 1) ch->rotation[1].t = ch->rotation[0].t;
    else return false;
    return true;
}

static void check_file(const uint8_t *d, size_t n, const char *path, const char *nm, bool body)
{
    ra_document *doc = NULL;
    if (fx_load_opt(d, n, path, body, "threads", "2", &doc, NULL) != RA_OK) return; /* the refused fixtures */
    g_files++;
    compare(doc, nm, "as loaded", true);
    size_t nch = 0;
    for (size_t a = 0; a < doc->scene.animation_count; a++) nch += doc->scene.animations[a].channel_count;
    if (nch >= 2) g_parallel++;
    size_t pick[3] = {0, nch / 2, nch ? nch - 1 : 0};
    static const char *const kind[3] = {"a position not finite", "a rotation not unit", "a rotation time repeated"};
    for (int p = 0; p < 3 && nch; p++)
        for (int k = 0; k < 3; k++) {
            ra_channel *ch = channel_at(&doc->scene, pick[p]), saved = *ch;
            ra_vec_key pos = ch->position_count ? ch->position[ch->position_count - 1] : (ra_vec_key){0};
            ra_quat_key r0 = ch->rotation_count ? ch->rotation[0] : (ra_quat_key){0};
            ra_quat_key r1 = ch->rotation_count > 1 ? ch->rotation[1] : (ra_quat_key){0};
            if (!spoil(ch, k)) continue;
            char what[96];
            snprintf(what, sizeof what, "channel %zu: %s", pick[p], kind[k]);
            compare(doc, nm, what, false);
            if (p == 0 && nch >= 2) { /* the last channel bad too: the first is named */
                ra_channel *last = channel_at(&doc->scene, nch - 1);
                ra_quat_key lr = last->rotation_count ? last->rotation[0] : (ra_quat_key){0};
                if (last->rotation_count) {
                    last->rotation[0].q.x = NAN;
                    snprintf(what, sizeof what, "channel 0 (%s) and the last", kind[k]);
                    compare(doc, nm, what, false);
                    last->rotation[0] = lr;
                }
            }
            *ch = saved;
            if (ch->position_count) ch->position[ch->position_count - 1] = pos;
            if (ch->rotation_count) ch->rotation[0] = r0;
            if (ch->rotation_count > 1) ch->rotation[1] = r1;
        }
    compare(doc, nm, "restored", true);
    ra_document_free(doc);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_check FIXTURE_DIR...\n");
        return 2;
    }
    fx_for_each_fixture(argc - 1, argv + 1, check_file);
    CHECK(g_files >= 50, "only %ld fixtures loaded", g_files);
    CHECK(g_parallel >= 20, "only %ld fixtures with two channels or more", g_parallel);
    printf("fixtures: %ld loaded, %ld checked in parallel, %ld cases compared\n", g_files, g_parallel, g_cases);
    return ra_test_finish("test_check");
}
