/* C use of the library through its public API only: load a file, print its
 * animation, write it as binary FBX when a second path is given, free it. */
#include <stdio.h>
#include <stdlib.h>

#include <retroanim/ra_fbx.h>
#include <retroanim/retroanim.h>

static int fail(const ra_error *err)
{
    char msg[RA_ERROR_TEXT_MAX];
    ra_error_format(err, msg, sizeof msg);
    fprintf(stderr, "%s\n", msg);
    return 1;
}

int main(int argc, char **argv)
{
    if (argc < 2) return 2;
    ra_error err;
    ra_error_clear(&err);
    ra_document *doc = NULL;
    if (ra_document_load_file(argv[1], NULL, &doc, &err) != RA_OK) return fail(&err);
    const ra_scene *s = ra_document_scene(doc);
    printf("%s: %zu nodes, %zu animation(s)\n", ra_format_id(ra_document_format(doc)), s->node_count,
           s->animation_count);
    if (argc > 2 && ra_fbx_write(s, argv[2], NULL, NULL, &err) != RA_OK) {
        ra_document_free(doc);
        return fail(&err);
    }
    ra_document_free(doc);
    return 0;
}
