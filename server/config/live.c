/*
 * live.c: the current configuration and the replaced ones still read (live.h).
 *
 * Each configuration installed is a node with a count of its readers. The current node is
 * never freed while current; a replaced node moves to a short list of retired ones and is freed
 * by the release that brings its count to zero (or at once, when nobody read it). The list holds
 * one node per reload that still has a reader, so a request that hangs holds one configuration,
 * never more than the reloads made during it.
 */
#include "server/config/live.h"

#include "base/error.h"

#include <pthread.h>
#include <stdlib.h>

struct live_node {
	struct config *config;
	uint64_t readers;
	struct live_node *next; /* in the retired list */
};

struct config_live {
	pthread_mutex_t lock;
	struct live_node *current;
	struct live_node *retired;
	uint64_t generation;
};

static void node_free(struct live_node *node)
{
	config_free(node->config);
	free(node);
}

int config_live_new(struct config *initial, struct config_live **out)
{
	*out = NULL;
	struct config_live *live = calloc(1, sizeof *live);
	struct live_node *node = calloc(1, sizeof *node);
	if (!live || !node || pthread_mutex_init(&live->lock, NULL) != 0) {
		free(live);
		free(node);
		return DIRAUTH_ERR_NOMEM;
	}
	node->config = initial;
	live->current = node;
	*out = live;
	return 0;
}

const struct config *config_live_acquire(struct config_live *live)
{
	pthread_mutex_lock(&live->lock);
	live->current->readers++;
	const struct config *config = live->current->config;
	pthread_mutex_unlock(&live->lock);
	return config;
}

void config_live_release(struct config_live *live, const struct config *config)
{
	struct live_node *free_me = NULL;
	pthread_mutex_lock(&live->lock);
	if (live->current->config == config) {
		live->current->readers--;
	} else {
		for (struct live_node **at = &live->retired; *at; at = &(*at)->next) {
			if ((*at)->config != config)
				continue;
			if (--(*at)->readers == 0) {
				free_me = *at;
				*at = free_me->next;
			}
			break;
		}
	}
	pthread_mutex_unlock(&live->lock);
	if (free_me)
		node_free(free_me);
}

int config_live_replace(struct config_live *live, struct config *next)
{
	struct live_node *node = calloc(1, sizeof *node), *free_me = NULL;
	if (!node)
		return DIRAUTH_ERR_NOMEM;
	node->config = next;
	pthread_mutex_lock(&live->lock);
	struct live_node *old = live->current;
	live->current = node;
	live->generation++;
	if (old->readers == 0) {
		free_me = old;
	} else {
		old->next = live->retired;
		live->retired = old;
	}
	pthread_mutex_unlock(&live->lock);
	if (free_me)
		node_free(free_me);
	return 0;
}

uint64_t config_live_generation(struct config_live *live)
{
	pthread_mutex_lock(&live->lock);
	uint64_t generation = live->generation;
	pthread_mutex_unlock(&live->lock);
	return generation;
}

void config_live_free(struct config_live *live)
{
	if (!live)
		return;
	while (live->retired) {
		struct live_node *node = live->retired;
		live->retired = node->next;
		node_free(node);
	}
	node_free(live->current);
	pthread_mutex_destroy(&live->lock);
	free(live);
}
