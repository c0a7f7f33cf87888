/* C use of the library: load a file, print its animation, write it as binary
 * FBX when a second path is given, free it. */
#include <stdio.h>
#include <stdlib.h>

#include <retroanim/ra_fbx.h>
#include <retroanim/retroanim.h>

int main(int argc, char **argv)
{
    if (argc < 2) return 2;
    uint8_t *data;
    size_t size;
    ra_error err;
    ra_error_clear(&err);
    ra_document *doc = NULL;
    if (ra_read_file(argv[1], &data, &size, &err) != RA_OK ||
        ra_document_load(data, size, argv[1], NULL, &doc, &err) != RA_OK) {
        char msg[512];
        ra_error_format(&err, msg, sizeof msg);
        fprintf(stderr, "%s\n", msg);
        return 1;
    }
    ra_free(data);
    printf("%s: %zu nodes, %zu animation(s)\n", doc->format->id, doc->scene.node_count, doc->scene.animation_count);
    if (argc > 2 && ra_fbx_write(&doc->scene, argv[2], NULL, NULL, &err) != RA_OK) {
        char msg[512];
        ra_error_format(&err, msg, sizeof msg);
        fprintf(stderr, "%s\n", msg);
        ra_document_free(doc);
        return 1;
    }
    ra_document_free(doc);
    return 0;
}
