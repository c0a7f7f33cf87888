// Shared by the tests of retroanim's writers (test_gltf.cpp, test_fbx.cpp):
// reading a written file back, loading the fixture the failure cases use,
// and the failure cases every writer must pass.
#ifndef RETROANIM_WRITER_TEST_H
#define RETROANIM_WRITER_TEST_H

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "ra_test.h"
#include "retroanim/ra_document.h"

static inline std::vector<char> Bytes(const std::string &p)
{
    std::ifstream f(p, std::ios::binary);
    return std::vector<char>((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

// A scratch folder /tmp/retroanim-NAME-XXXXXX with an again/ folder inside
// (for second writes of the same name); "" if it cannot be made.
static inline std::string MakeWorkDir(const char *name)
{
    std::string t = std::string("/tmp/retroanim-") + name + "-XXXXXX";
    std::vector<char> tmpl(t.begin(), t.end());
    tmpl.push_back(0);
    if (!mkdtemp(tmpl.data())) return "";
    std::string dir = tmpl.data();
    mkdir((dir + "/again").c_str(), 0755);
    return dir;
}

static inline void RemoveWorkDir(const std::string &dir)
{
    std::string rm = "rm -rf '" + dir + "'";
    if (std::system(rm.c_str()) != 0) std::fprintf(stderr, "could not remove %s\n", dir.c_str());
}

// The file at path loaded whole, or nullptr (a failed check says so).
static inline ra_document *LoadWhole(const std::string &path)
{
    ra_document *doc = nullptr;
    ra_error err;
    ra_error_clear(&err);
    std::vector<char> b = Bytes(path);
    if (b.empty() ||
        ra_document_load((const uint8_t *)b.data(), b.size(), path.c_str(), nullptr, &doc, &err) != RA_OK) {
        CHECK(false, "cannot load %s", path.c_str());
        return nullptr;
    }
    return doc;
}

// A write that fails names its output: /dev/full is an I/O error whose
// message names /dev/full, and so is a folder that does not exist.
// write(path, err) writes the scene with the writer under test.
template <typename Write> static void CheckWriteFailures(const std::string &dir, const char *ext, Write write)
{
    ra_error err;
    ra_error_clear(&err);
    ra_status rs = write("/dev/full", &err);
    char msg[512];
    ra_error_format(&err, msg, sizeof msg);
    CHECK(rs == RA_ERR_IO && std::strstr(msg, "/dev/full"), "%s to /dev/full: status %d, message '%s'", ext, (int)rs,
          msg);
    std::string missing = dir + "/no/such/folder/x" + ext;
    ra_error_clear(&err);
    CHECK(write(missing.c_str(), &err) == RA_ERR_IO, "%s into a missing folder is not an I/O error", ext);
}

#endif
