/* Persistent worker threads: a generation counter under one mutex. */
#include <stdlib.h>
#include "_pool.h"
#include <unistd.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv_work = PTHREAD_COND_INITIALIZER, cv_done = PTHREAD_COND_INITIALIZER;
static pthread_mutex_t run_mu = PTHREAD_MUTEX_INITIALIZER; /* one parallel run at a time */
static ppy_task *slots[PPY_MAX_THREADS];
static unsigned long generation = 0;
static int pending = 0, started = 0, nthreads = 0;

static void *worker(void *arg) {
    int me = (int)(intptr_t)arg;
    unsigned long seen = 0;
    pthread_mutex_lock(&mu);
    for (;;) {
        while (generation == seen) pthread_cond_wait(&cv_work, &mu);
        seen = generation;
        ppy_task *t = slots[me];
        slots[me] = NULL;
        if (t == NULL) continue;
        pthread_mutex_unlock(&mu);
        ppy_run_task(t);
        pthread_mutex_lock(&mu);
        if (--pending == 0) pthread_cond_signal(&cv_done);
    }
    return NULL;
}

int ppy_pool_threads(void) {
    if (nthreads == 0) {
        const char *env = getenv("PPY_NUM_THREADS");
        long n = env && *env ? strtol(env, NULL, 10) : sysconf(_SC_NPROCESSORS_ONLN);
        nthreads = n < 1 ? 1 : (n > PPY_MAX_THREADS ? PPY_MAX_THREADS : (int)n);
    }
    return nthreads;
}

void ppy_pool_set_threads(int n) {
    pthread_mutex_lock(&run_mu);
    nthreads = n < 1 ? 1 : (n > PPY_MAX_THREADS ? PPY_MAX_THREADS : n);
    pthread_mutex_unlock(&run_mu);
}

static int ensure_started(int want) {
    while (started < want) {
        pthread_t th;
        if (pthread_create(&th, NULL, worker, (void *)(intptr_t)(started + 1)) != 0) return started;
        pthread_detach(th);
        started++;
    }
    return started;
}

int ppy_pool_run(ppy_task *tasks, int n) {
    int flags = 0, i;
    pthread_mutex_lock(&run_mu);
    int workers = ensure_started(n - 1);
    pthread_mutex_lock(&mu);
    pending = 0;
    for (i = 1; i < n && i <= workers; i++) { slots[i] = &tasks[i]; pending++; }
    generation++;
    pthread_cond_broadcast(&cv_work);
    pthread_mutex_unlock(&mu);
    for (; i < n; i++) ppy_run_task(&tasks[i]); /* no worker could start: run here */
    ppy_run_task(&tasks[0]);
    pthread_mutex_lock(&mu);
    while (pending > 0) pthread_cond_wait(&cv_done, &mu);
    pthread_mutex_unlock(&mu);
    pthread_mutex_unlock(&run_mu);
    for (i = 0; i < n; i++) flags |= tasks[i].flags;
    return flags;
}
