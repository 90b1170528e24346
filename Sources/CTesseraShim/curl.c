#include "CTesseraShim.h"
#include <curl/curl.h>

int tessera_curl_setopt_long(void *curl, int option, long value) { return curl_easy_setopt(curl, (CURLoption)option, value); }
int tessera_curl_setopt_offset(void *curl, int option, int64_t value) { return curl_easy_setopt(curl, (CURLoption)option, (curl_off_t)value); }
int tessera_curl_setopt_string(void *curl, int option, const char *value) { return curl_easy_setopt(curl, (CURLoption)option, value); }
int tessera_curl_setopt_pointer(void *curl, int option, void *value) { return curl_easy_setopt(curl, (CURLoption)option, value); }
int tessera_curl_setopt_callback(void *curl, int option, tessera_curl_data_callback callback) {
    return curl_easy_setopt(curl, (CURLoption)option, callback);
}
int tessera_curl_setopt_seek(void *curl, tessera_curl_seek_callback callback) {
    return curl_easy_setopt(curl, CURLOPT_SEEKFUNCTION, (curl_seek_callback)callback);
}
int tessera_curl_getinfo_long(void *curl, int info, long *value) { return curl_easy_getinfo(curl, (CURLINFO)info, value); }
