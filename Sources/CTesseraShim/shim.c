#define _GNU_SOURCE
#include "CTesseraShim.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <libavutil/cpu.h>
#include <libavformat/avformat.h>
#include <libavcodec/avcodec.h>
#include <libavutil/display.h>
#include <libavutil/channel_layout.h>
#include <libavutil/log.h>
#include <x264.h>

int tessera_averror_eof(void) { return AVERROR_EOF; }
int tessera_averror_eagain(void) { return AVERROR(EAGAIN); }
int tessera_averror_einval(void) { return AVERROR(EINVAL); }
int tessera_averror_enomem(void) { return AVERROR(ENOMEM); }
int tessera_averror_invaliddata(void) { return AVERROR_INVALIDDATA; }
int tessera_averror(int posix_errno) { return AVERROR(posix_errno); }
int64_t tessera_nopts_value(void) { return AV_NOPTS_VALUE; }
void tessera_error_string(int code, char *buffer, size_t size) {
    if (av_strerror(code, buffer, size) < 0) {
        snprintf(buffer, size, "error %d", code);
    }
}
int tessera_time_base(void) { return AV_TIME_BASE; }
void tessera_set_log_level(int level) { av_log_set_level(level); }
int tessera_log_level_error(void) { return AV_LOG_ERROR; }
int tessera_log_level_quiet(void) { return AV_LOG_QUIET; }

double tessera_stream_rotation(const AVStream *stream) {
    const uint8_t *matrix = av_stream_get_side_data(stream, AV_PKT_DATA_DISPLAYMATRIX, NULL);
    if (!matrix) return NAN;
    return av_display_rotation_get((const int32_t *)matrix);
}

int tessera_codec_is_intra_only(int codec_id) {
    const AVCodecDescriptor *d = avcodec_descriptor_get((enum AVCodecID)codec_id);
    return d && (d->props & AV_CODEC_PROP_INTRA_ONLY) ? 1 : 0;
}

int tessera_codecpar_channels(const AVCodecParameters *par) { return par->ch_layout.nb_channels; }

void tessera_set_default_channel_layout(AVCodecContext *ctx, int channels) {
    av_channel_layout_uninit(&ctx->ch_layout);
    av_channel_layout_default(&ctx->ch_layout, channels);
}

void tessera_set_codecpar_channels(AVCodecParameters *par, int channels) {
    if (par->ch_layout.nb_channels == channels) return;
    av_channel_layout_uninit(&par->ch_layout);
    av_channel_layout_default(&par->ch_layout, channels);
}

int tessera_stream_display_matrix(const AVStream *stream, int32_t out[9]) {
    size_t size = 0;
    const uint8_t *matrix = av_stream_get_side_data(stream, AV_PKT_DATA_DISPLAYMATRIX, &size);
    if (!matrix || size < sizeof(int32_t) * 9) return 0;
    memcpy(out, matrix, sizeof(int32_t) * 9);
    return 1;
}

int tessera_stream_set_display_matrix(AVStream *stream, const int32_t matrix[9]) {
    uint8_t *data = av_stream_new_side_data(stream, AV_PKT_DATA_DISPLAYMATRIX, sizeof(int32_t) * 9);
    if (!data) return AVERROR(ENOMEM);
    memcpy(data, matrix, sizeof(int32_t) * 9);
    return 0;
}

int tessera_malloc_perturb(int byte) {
#if defined(__GLIBC__) && defined(M_PERTURB)
    return mallopt(M_PERTURB, byte);
#else
    (void)byte;
    return 0;
#endif
}

int tessera_malloc_keep_freed(int largest_from_heap, int kept_free) {
#if defined(__GLIBC__) && defined(M_MMAP_THRESHOLD) && defined(M_TRIM_THRESHOLD)
    return mallopt(M_MMAP_THRESHOLD, largest_from_heap) == 1 && mallopt(M_TRIM_THRESHOLD, kept_free) == 1;
#else
    (void)largest_from_heap;
    (void)kept_free;
    return 0;
#endif
}

int tessera_malloc_one_arena(void) {
#if defined(__GLIBC__) && defined(M_ARENA_MAX)
    return mallopt(M_ARENA_MAX, 1) == 1;
#else
    return 0;
#endif
}

#if defined(__GLIBC__)
// `tessera worker` keeps one malloc arena from its first allocation on (ProcessAllocator.useOneArena):
// the setting only binds threads that have not allocated yet, and Swift's runtime starts threads before
// any command runs. glibc calls constructors with the program's arguments.
__attribute__((constructor)) static void tessera_worker_allocator(int argc, char **argv, char **envp) {
    (void)envp;
    if (argc > 1 && argv[1] != NULL && strcmp(argv[1], "worker") == 0) tessera_malloc_one_arena();
}
#endif

extern char **environ;

int tessera_spawn(char *const argv[], const char *directory, const char *stdout_path, const char *stderr_path, int *pid_out) {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, stdout_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, 2, stderr_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addclosefrom_np(&actions, 3);
    if (directory) posix_spawn_file_actions_addchdir_np(&actions, directory);
    // Default dispositions and no blocked signal in the child, whatever the parent set up for itself.
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    sigset_t every, none;
    sigfillset(&every);
    sigemptyset(&none);
    posix_spawnattr_setsigdefault(&attributes, &every);
    posix_spawnattr_setsigmask(&attributes, &none);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
    pid_t pid;
    int rc = posix_spawn(&pid, argv[0], &actions, &attributes, argv, environ);
    posix_spawnattr_destroy(&attributes);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) return -rc;
    *pid_out = pid;
    return 0;
}

int tessera_thread_count(void) {
    DIR *tasks = opendir("/proc/self/task");
    if (!tasks) return -1;
    int count = 0;
    struct dirent *entry;
    while ((entry = readdir(tasks))) {
        if (entry->d_name[0] != '.') count++;
    }
    closedir(tasks);
    return count;
}

int tessera_prefork(int *fd) {
    int ends[2];
    if (pipe2(ends, O_CLOEXEC) != 0) return -errno;
    pid_t pid = fork();
    if (pid < 0) {
        int error = errno;
        close(ends[0]);
        close(ends[1]);
        return -error;
    }
    if (pid > 0) {
        close(ends[0]);
        *fd = ends[1];
        return pid;
    }
    // The child keeps only the standard streams and its read end (as descriptor 3): another child's
    // write end held here would keep that child waiting after the parent ended.
    if (ends[0] != 3) {
        dup2(ends[0], 3);
    }
    close_range(4, ~0U, 0);
    *fd = 3;
    return 0;
}

long tessera_prefork_await(int fd, char **block) {
    size_t capacity = 4096, length = 0;
    char *buffer = malloc(capacity);
    for (;;) {
        if (!buffer) _exit(1);
        ssize_t got = read(fd, buffer + length, capacity - length);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        length += (size_t)got;
        if (length == capacity) buffer = realloc(buffer, capacity *= 2);
    }
    close(fd);
    if (length == 0) _exit(0);
#if defined(__GLIBC__)
    // What the constructor below does for `tessera worker`, while this child is still one thread.
    tessera_malloc_one_arena();
#endif
    int null = open("/dev/null", O_RDWR);
    if (null >= 0) {
        dup2(null, 0);
        dup2(null, 1);
        dup2(null, 2);
        if (null > 2) close(null);
    }
    *block = buffer;
    return (long)length;
}

void tessera_set_process_title(int argc, char **argv, const char *title) {
    if (argc < 1 || !argv[0]) return;
    // The kernel shows the bytes from the first argument to the end of the last: they must be contiguous.
    for (int i = 1; i < argc; i++) {
        if (argv[i] != argv[i - 1] + strlen(argv[i - 1]) + 1) return;
    }
    char *start = argv[0];
    size_t room = (size_t)(argv[argc - 1] + strlen(argv[argc - 1]) - start);
    size_t length = strlen(title);
    if (length > room) length = room;
    memcpy(start, title, length);
    memset(start + length, 0, room - length + 1);
}

int tessera_spawn_wait(char *const argv[], const char *directory, const char *stdout_path, const char *stderr_path) {
    int pid;
    int rc = tessera_spawn(argv, directory, stdout_path, stderr_path, &pid);
    if (rc != 0) return rc;
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) return -errno;
    }
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return 255;
}

int tessera_x264_build(void) { return X264_BUILD; }

void tessera_force_cpu_flags(int flags) {
    av_force_cpu_flags(flags);
}

int tessera_cpu_flags(void) {
    return av_get_cpu_flags();
}
