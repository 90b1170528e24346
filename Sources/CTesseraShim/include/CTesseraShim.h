#ifndef TESSERA_SHIM_H
#define TESSERA_SHIM_H
#include <stdint.h>
#include <stddef.h>

struct AVCodecContext;
struct AVCodecParameters;
struct AVStream;

/// AVERROR_EOF, AVERROR(EAGAIN) and friends: macros Swift cannot import.
int tessera_averror_eof(void);
int tessera_averror_eagain(void);
int tessera_averror_einval(void);
int tessera_averror_enomem(void);
int tessera_averror_invaliddata(void);
/// AVERROR(e) for a positive errno value.
int tessera_averror(int posix_errno);
/// AV_NOPTS_VALUE.
int64_t tessera_nopts_value(void);
/// av_err2str: writes the message for `code` into `buffer`.
void tessera_error_string(int code, char *buffer, size_t size);
/// AV_TIME_BASE as numerator/denominator of AV_TIME_BASE_Q.
int tessera_time_base(void);
/// Quiets FFmpeg's own logging (Tessera reports errors itself) at the given av_log level.
void tessera_set_log_level(int level);
int tessera_log_level_error(void);
int tessera_log_level_quiet(void);
/// Rotation of the stream's display matrix side data, counter-clockwise degrees, or NAN when none.
double tessera_stream_rotation(const struct AVStream *stream);
/// Whether a codec is intra-only (every frame is a random-access point).
int tessera_codec_is_intra_only(int codec_id);
/// Number of channels in a codec parameters' channel layout.
int tessera_codecpar_channels(const struct AVCodecParameters *par);
/// Fills an encoder's channel layout with the default layout for `channels`.
void tessera_set_default_channel_layout(struct AVCodecContext *ctx, int channels);
/// Sets a codec parameters' channel layout to the default layout for `channels`.
void tessera_set_codecpar_channels(struct AVCodecParameters *par, int channels);
/// Copies a stream's display matrix (9 int32) into `out`; returns 1 when the stream has one, else 0.
int tessera_stream_display_matrix(const struct AVStream *stream, int32_t out[9]);
/// Gives a stream the display matrix `matrix`. Returns 0 or an AVERROR.
int tessera_stream_set_display_matrix(struct AVStream *stream, const int32_t matrix[9]);
/// Fills every new heap allocation with a fixed byte (glibc M_PERTURB), so that code which reads memory
/// before writing it sees the same bytes on every run. Returns 1 when the allocator supports it.
int tessera_malloc_perturb(int byte);
/// Blocks up to `largest_from_heap` bytes come from the heap, and up to `kept_free` bytes freed at its
/// end stay with the process (glibc M_MMAP_THRESHOLD and M_TRIM_THRESHOLD). Returns 1 when the
/// allocator took both.
int tessera_malloc_keep_freed(int largest_from_heap, int kept_free);

/// Forces libavutil's CPU flags (av_force_cpu_flags): 0 turns every SIMD path of libavcodec and libswscale
/// off, -1 detects the CPU again.
void tessera_force_cpu_flags(int flags);
/// The CPU's SIMD features libavutil detected (av_get_cpu_flags).
int tessera_cpu_flags(void);

/// Limits glibc to one arena (M_ARENA_MAX): 1 when set, 0 where there is no such setting.
int tessera_malloc_one_arena(void);
/// Runs `argv[0]` with stdin from /dev/null, stdout and stderr to the given files, in `directory`
/// (or here when NULL), every other descriptor closed, and waits for it. Returns its exit status
/// (128 + signal when killed), or -errno when it could not be started.
int tessera_spawn_wait(char *const argv[], const char *directory, const char *stdout_path, const char *stderr_path);
/// Starts `argv[0]` as `tessera_spawn_wait` does, without waiting: 0 with its process id in `pid`, or -errno.
int tessera_spawn(char *const argv[], const char *directory, const char *stdout_path, const char *stderr_path, int *pid);
/// Threads this process runs now (entries of /proc/self/task), or -1.
int tessera_thread_count(void);
/// Forks a child that waits for its arguments (`tessera_prefork_await`). In the parent: the child's process
/// id, with the write end of its pipe (close-on-exec) in `fd`. In the child: 0, with the read end in `fd`
/// and every other descriptor above 2 closed. -errno when it cannot fork.
int tessera_prefork(int *fd);
/// In a forked child: reads the parent's NUL-separated argument block until the parent closes the pipe, keeps
/// one malloc arena (as a `tessera worker` does), and puts the standard streams on /dev/null. Exits the
/// process, status 0, when the block is empty: the parent did not need this child, or ended. The block is
/// malloc'd; its length is returned.
long tessera_prefork_await(int fd, char **block);
/// Writes `title` over the process's argument strings (what ps shows), cut to the room they had.
void tessera_set_process_title(int argc, char **argv, const char *title);
/// The libx264 build number Tessera was compiled against (X264_BUILD).
int tessera_x264_build(void);
/// libcurl's curl_easy_setopt and curl_easy_getinfo are variadic: one typed entry point per argument kind.
/// `curl` is a CURL * (void in curl.h); options and infos are CURLoption and CURLINFO values. Return CURLcode.
typedef size_t (*tessera_curl_data_callback)(char *data, size_t size, size_t count, void *context);
int tessera_curl_setopt_long(void *curl, int option, long value);
int tessera_curl_setopt_offset(void *curl, int option, int64_t value);
int tessera_curl_setopt_string(void *curl, int option, const char *value);
int tessera_curl_setopt_pointer(void *curl, int option, void *value);
int tessera_curl_setopt_callback(void *curl, int option, tessera_curl_data_callback callback);
/// A CURLOPT_SEEKFUNCTION: moves the upload back to `offset` when curl sends a request body again (a reused
/// connection found closed). Returns CURL_SEEKFUNC_OK (0) or CURL_SEEKFUNC_FAIL (1).
typedef int (*tessera_curl_seek_callback)(void *context, int64_t offset, int origin);
int tessera_curl_setopt_seek(void *curl, tessera_curl_seek_callback callback);
int tessera_curl_getinfo_long(void *curl, int info, long *value);
#endif
